"""Production drift: a Bernoulli CUSUM per segment against a frozen baseline.

Pure functions over outcomes (one per scored record: did the judge find an
unsupported claim?). The worker loads outcomes and baselines from the store,
calls :func:`detect`, and hands the readings to the alert lifecycle.

- The baseline window is the oldest stretch of scored records that holds at
  least ``baseline_records`` records and spans ``baseline_days``; once
  established it is frozen. A segment with fewer than ``segment_min_baseline``
  records in that window (a model version that did not exist yet, say) is
  compared with the overall baseline: its parent.
- Rates use the Jeffreys estimate (u + 0.5) / (n + 1), floored at ``MIN_RATE``
  so that a spotless baseline does not make one bad answer an alarm.
- Each segment's CUSUM runs over the records after the window, in trace time:
  S ← max(0, S + y·ln(q1/q0) + (1−y)·ln((1−q1)/(1−q0))), q1 = q0 + shift.
  Pending at h/2, firing at h; the change point is where S last left zero.
- Attribution: when a model version goes bad, every route and tenant it serves
  drifts too. A drifting segment whose CUSUM falls back below h/2 once the
  records of a more concentrated drifting segment are taken out is *explained*
  by it and raises no alert of its own.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Any, Literal

from .model import Outcome, Signal, segment_key

RULE = "faithfulness_drift"
MIN_RATE = 0.01
MAX_EXAMPLES = 3

Level = Literal["ok", "pending", "firing"]


@dataclass(frozen=True, slots=True)
class DriftConfig:
    dimensions: tuple[str, ...]
    threshold: float = 15.0
    shift: float = 0.08
    baseline_records: int = 2000
    baseline_days: float = 7.0
    segment_min_baseline: int = 100


@dataclass(frozen=True, slots=True)
class Baseline:
    records: int
    unsupported: int

    @property
    def rate(self) -> float:
        return max(MIN_RATE, (self.unsupported + 0.5) / (self.records + 1))


@dataclass(frozen=True, slots=True)
class Reading:
    """One segment's detector state after a run."""

    segment: Mapping[str, str]
    baseline: Baseline
    baseline_source: Literal["own", "overall"]
    records: int
    unsupported: int
    statistic: float
    level: Level
    change_at: datetime | None = None
    explained_by: Mapping[str, str] | None = None
    examples: tuple[Mapping[str, Any], ...] = field(default_factory=tuple)

    @property
    def rate(self) -> float:
        return self.unsupported / self.records if self.records else 0.0

    def signal(self, threshold: float) -> Signal:
        low, high = wilson_interval(self.unsupported, self.records)
        details: dict[str, Any] = {
            "baseline_rate": round(self.baseline.rate, 4),
            "current_interval": [round(low, 4), round(high, 4)],
            "baseline_records": self.baseline.records,
            "baseline_source": self.baseline_source,
            "current_rate": round(self.rate, 4),
            "records": self.records,
            "unsupported": self.unsupported,
            "statistic": round(self.statistic, 3),
            "threshold": threshold,
            "change_at": self.change_at.isoformat() if self.change_at else None,
            "examples": list(self.examples),
        }
        level: Level = self.level
        if self.explained_by is not None:
            details["explained_by"] = dict(self.explained_by)
            level = "ok"
        return Signal(rule=RULE, segment=self.segment, level=level, details=details)


def wilson_interval(successes: int, trials: int, z: float = 1.96) -> tuple[float, float]:
    """95% Wilson score interval of a rate (sensible even at 0 or n successes)."""
    if trials == 0:
        return 0.0, 1.0
    p = successes / trials
    denominator = 1 + z * z / trials
    centre = (p + z * z / (2 * trials)) / denominator
    half = z * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials)) / denominator
    return max(0.0, centre - half), min(1.0, centre + half)


def segments_of(labels: Mapping[str, str], dimensions: Sequence[str]) -> list[dict[str, str]]:
    """The overall segment plus one segment per monitored label the record has."""
    return [{}] + [{d: labels[d]} for d in dimensions if labels.get(d)]


def _matches(outcome: Outcome, segment: Mapping[str, str]) -> bool:
    return all(outcome.labels.get(k) == v for k, v in segment.items())


def baseline_window(
    outcomes: Sequence[Outcome], config: DriftConfig
) -> tuple[datetime, datetime] | None:
    """The window the baseline is built from, once the data covers it; else None."""
    if len(outcomes) < config.baseline_records:
        return None
    start = outcomes[0].at
    end = max(
        outcomes[config.baseline_records - 1].at, start + timedelta(days=config.baseline_days)
    )
    if outcomes[-1].at < end:
        return None
    return start, end


def compute_baselines(
    outcomes: Sequence[Outcome], window_end: datetime, config: DriftConfig
) -> dict[str, Baseline]:
    counts: dict[str, list[int]] = {}
    for outcome in outcomes:
        if outcome.at > window_end:
            break
        for segment in segments_of(outcome.labels, config.dimensions):
            tally = counts.setdefault(segment_key(segment), [0, 0])
            tally[0] += 1
            tally[1] += outcome.unsupported
    return {
        key: Baseline(n, u)
        for key, (n, u) in counts.items()
        if key == "" or n >= config.segment_min_baseline
    }


def cusum(ys: Sequence[bool], q0: float, q1: float) -> tuple[float, int | None]:
    """Final statistic and the index where it last rose from zero (None if it is zero)."""
    up = math.log(q1 / q0)
    down = math.log((1 - q1) / (1 - q0))
    statistic = 0.0
    start: int | None = None
    for i, y in enumerate(ys):
        statistic = max(0.0, statistic + (up if y else down))
        if statistic == 0.0:
            start = None
        elif start is None:
            start = i
    return statistic, start


def _level(statistic: float, threshold: float) -> Level:
    if statistic >= threshold:
        return "firing"
    return "pending" if statistic >= threshold / 2 else "ok"


def _read(
    segment: Mapping[str, str],
    outcomes: Sequence[Outcome],
    baseline: Baseline,
    source: Literal["own", "overall"],
    config: DriftConfig,
) -> Reading:
    q0 = baseline.rate
    q1 = min(q0 + config.shift, 0.99)
    statistic, start = cusum([o.unsupported for o in outcomes], q0, q1)
    examples = tuple(
        {"trace_id": o.trace_id, "unsupported_claims": list(o.unsupported_claims[:3])}
        for o in reversed(outcomes)
        if o.unsupported
    )[:MAX_EXAMPLES]
    return Reading(
        segment=dict(segment),
        baseline=baseline,
        baseline_source=source,
        records=len(outcomes),
        unsupported=sum(o.unsupported for o in outcomes),
        statistic=statistic,
        level=_level(statistic, config.threshold),
        change_at=outcomes[start].at if start is not None else None,
        examples=examples if start is not None else (),
    )


def detect(
    outcomes: Sequence[Outcome],
    baselines: Mapping[str, Baseline],
    window_end: datetime,
    config: DriftConfig,
) -> list[Reading]:
    """Run every segment's CUSUM over the outcomes after the baseline window."""
    overall = baselines[""]
    streams: dict[str, tuple[dict[str, str], list[Outcome]]] = {}
    for outcome in outcomes:
        if outcome.at <= window_end:
            continue
        for segment in segments_of(outcome.labels, config.dimensions):
            streams.setdefault(segment_key(segment), (segment, []))[1].append(outcome)
    readings = {}
    for key, (segment, stream) in streams.items():
        own = baselines.get(key)
        baseline, source = (own, "own") if own is not None else (overall, "overall")
        readings[key] = _read(segment, stream, baseline, source, config)  # type: ignore[arg-type]
    return _attribute(readings, streams, config)


def _attribute(
    readings: dict[str, Reading],
    streams: Mapping[str, tuple[dict[str, str], list[Outcome]]],
    config: DriftConfig,
) -> list[Reading]:
    drifting = sorted(
        (r for r in readings.values() if r.level != "ok"),
        key=lambda r: (-(r.rate - r.baseline.rate), r.records),
    )
    roots: list[Reading] = []
    for reading in drifting:
        stream = streams[segment_key(reading.segment)][1]
        for root in roots:
            rest = [o.unsupported for o in stream if not _matches(o, root.segment)]
            q0 = reading.baseline.rate
            statistic, _ = cusum(rest, q0, min(q0 + config.shift, 0.99))
            if statistic < config.threshold / 2:
                key = segment_key(reading.segment)
                readings[key] = replace(reading, explained_by=dict(root.segment))
                break
        else:
            roots.append(reading)
    return sorted(readings.values(), key=lambda r: segment_key(r.segment))
