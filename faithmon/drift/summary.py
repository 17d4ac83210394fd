"""A drift run as plain data: what each detector read and which segments went quiet.

The worker stores this after every run, so a reader is shown the detectors' state
without running them again (that costs seconds over a large store).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from ..model import segment_key
from ..model.segment_state import detector_state
from .baseline import wilson_interval
from .detect import Reading
from .silence import Silence


def _name(segment: Mapping[str, str]) -> str:
    return segment_key(segment) or "overall"


def _interval(bad: float, records: int) -> list[float]:
    low, high = wilson_interval(bad, records)
    return [round(low, 4), round(high, 4)]


def _at(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


def detector(r: Reading) -> dict[str, Any]:
    """One detector's reading, JSON-ready (times as ISO-8601 text)."""
    state = detector_state(r.level, r.folded, r.explained_by is not None)
    observed = r.baseline.records_of(r.stream)
    return {
        "stream": r.stream,
        "baseline_rate": round(r.baseline_rate, 4),
        "baseline_interval": _interval(r.baseline_rate * observed, observed),
        "baseline_records": observed,
        "baseline_source": r.baseline_source,
        "records": r.records,
        "current_rate": round(r.rate, 4),
        "current_interval": _interval(r.unsupported, r.records),
        "cusum": round(r.statistic, 3),
        "threshold": r.threshold,
        "expected_delay": round(r.expected_delay, 1) if r.expected_delay is not None else None,
        "records_per_day": round(r.per_day, 1),
        "change_at": _at(r.change_at),
        "last_at": _at(r.last_at),
        "state": state,
        "explained_by": _name(r.explained_by) if r.explained_by is not None else None,
        "causes": r.cause_rates,
    }


def summarize(
    readings: Sequence[Reading],
    silent: Sequence[Silence],
    building: Sequence[Mapping[str, Any]] = (),
) -> dict[str, Any]:
    """``{"readings": [...], "silent": [...], "building": [...]}``: every detector with its
    segment's labels, every watched segment that went quiet, and each partition whose
    baseline is still building with how far it has come (``drift.ceiling.progress``)."""
    return {
        "building": [dict(b) for b in building],
        "readings": [{"labels": dict(r.segment), **detector(r)} for r in readings],
        "silent": [
            {"labels": dict(s.segment), "last_at": s.last_at.isoformat(), "per_day": s.per_day}
            for s in silent
        ],
    }
