"""The ceiling: alerts from the first hour, while a partition's baseline is still building.

Drift compares a segment with its own past, so it needs a frozen baseline
(``baseline_records`` scored records over ``baseline_days``); an app with little traffic
would be unwatched for days. Until its partition's baseline is frozen, a segment raises
``faithfulness_ceiling`` when its unsupported rate over the last ``window`` is above
``ceiling`` on at least ``min_records`` scored records: an absolute bar, not a change.
Once the baseline is frozen the ceiling stands down and drift takes over.

As drift attributes, the segment with the highest rate raises the alert, and one whose
unsupported records all lie in segments already raised in its partition is *explained*
by them; a partition's overall comes last and raises only for records no raised segment
holds. An alert resolves when its segment is back under the ceiling (or has too few
records to say), is explained, or its partition's baseline froze.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from ..model import Alert, Outcome, Signal, segment_key, segments_of
from .config import CEILING_RULE, DriftConfig

RULE = CEILING_RULE

MAX_EXAMPLES = 3


@dataclass(frozen=True, slots=True)
class Ceiling:
    """FAITHMON_ALERT_CEILING and FAITHMON_ALERT_CEILING_MIN_RECORDS."""

    ceiling: float = 0.25
    """The unsupported rate above which a segment without a frozen baseline alerts."""
    ceiling_min_records: int = 30
    """Scored records in the window a rate needs before it may alert."""
    window: timedelta = timedelta(hours=1)


@dataclass(slots=True)
class _Segment:
    segment: dict[str, str]
    root: str
    records: int = 0
    bad: set[str] = field(default_factory=set)
    examples: list[Outcome] = field(default_factory=list)

    @property
    def rate(self) -> float:
        return len(self.bad) / self.records if self.records else 0.0


def _counted(
    outcomes: Iterable[Outcome], building: Collection[str], config: DriftConfig
) -> dict[str, _Segment]:
    found: dict[str, _Segment] = {}
    for outcome in outcomes:
        root = segment_key(config.partition_of(outcome.labels))
        if root not in building:
            continue
        for segment in segments_of(outcome.labels, config.dimensions, config.partition):
            key = segment_key(segment)
            item = found.get(key) or found.setdefault(key, _Segment(dict(segment), root))
            item.records += 1
            if outcome.unsupported:
                item.bad.add(outcome.trace_id)
                item.examples.append(outcome)
    return found


def _details(item: _Segment, ceiling: Ceiling) -> dict[str, Any]:
    newest = sorted(item.examples, key=lambda o: o.at, reverse=True)[:MAX_EXAMPLES]
    return {
        "stream": "unsupported",
        "ceiling": ceiling.ceiling,
        "window_hours": round(ceiling.window.total_seconds() / 3600, 2),
        "records": item.records,
        "unsupported": len(item.bad),
        "current_rate": round(item.rate, 4),
        "min_records": ceiling.ceiling_min_records,
        "examples": [
            {"trace_id": o.trace_id, "unsupported_claims": list(o.unsupported_claims[:3])}
            for o in newest
        ],
    }


def ceiling_signals(
    outcomes: Sequence[Outcome],
    building: Collection[str],
    open_alerts: Iterable[Alert],
    config: DriftConfig,
    ceiling: Ceiling,
) -> list[Signal]:
    """Signals of the outcomes of the last window (``outcomes``), for the partitions
    whose baseline is not frozen (``building``: their overalls' keys): firing per segment
    over the ceiling that no other explains; ok for every other open alert's segment."""
    counted = _counted(outcomes, building, config)
    over = sorted(
        (
            s
            for s in counted.values()
            if s.records >= ceiling.ceiling_min_records and s.rate > ceiling.ceiling
        ),
        key=lambda s: (segment_key(s.segment) == s.root, -s.rate, segment_key(s.segment)),
    )
    raised: dict[str, list[_Segment]] = {}
    signals: list[Signal] = []
    for item in over:
        roots = raised.setdefault(item.root, [])
        details = _details(item, ceiling)
        covered = set().union(*(r.bad for r in roots))
        if roots and item.bad <= covered:
            by = max(roots, key=lambda r: len(r.bad & item.bad))
            details["explained_by"] = dict(by.segment)
            signals.append(Signal(RULE, item.segment, "ok", details))
            continue
        roots.append(item)
        signals.append(Signal(RULE, item.segment, "firing", details))
    seen = {segment_key(s.segment) for s in over}
    for alert in open_alerts:
        key = segment_key(alert.segment)
        if alert.rule != RULE or key in seen:
            continue
        seen.add(key)
        now = counted.get(key)
        details = _details(now, ceiling) if now is not None else {"records": 0}
        root = segment_key(config.partition_of(alert.segment))
        if root not in building:
            details["baseline_frozen"] = True  # drift takes over
        signals.append(Signal(RULE, dict(alert.segment), "ok", details))
    return signals


def progress(
    seen: int,
    first_at: datetime | None,
    now: datetime,
    config: DriftConfig,
    ceiling: Ceiling,
    first: bool = True,
) -> dict[str, Any]:
    """How far a partition's baseline has come, and what watches it until then. The
    ``first`` window needs ``baseline_records``; a partition seen after it froze (a new
    tenant) freezes over ``segment_min_baseline`` of its own (see :mod:`.baseline`)."""
    days = (now - first_at).total_seconds() / 86400 if first_at is not None else 0.0
    return {
        "records": seen,
        "records_needed": config.baseline_records if first else config.segment_min_baseline,
        "days": round(max(days, 0.0), 1),
        "days_needed": config.baseline_days,
        "ceiling": ceiling.ceiling,
    }


def progress_line(found: Mapping[str, Any]) -> str:
    """``baseline: 340 of 2,000 scored records, 2 of 7 days; until then the ceiling of 25%
    applies``: the one wording every page and `drift status` use."""
    return (
        f"baseline: {found['records']:,} of {found['records_needed']:,} scored records,"
        f" {found['days']:g} of {found['days_needed']:g} days; until then the ceiling of"
        f" {found['ceiling']:.0%} applies"
    )
