"""Thresholds from stored history: what `faithmon drift calibrate --days N` computes.

The budget thresholds of :func:`.detect.thresholds` assume the segment runs at
its baseline rate. Real traffic rarely does: the judge's noise, a slow creep and
the error of a baseline estimated from a sample all raise the rate the detector
sees while nothing is wrong, and its false alarms with it. Calibration measures
that rate on the last N days (leaving out the stretches where an alert fired)
and picks, per detector, the threshold whose run length *at that rate* matches
the detector's share of the false-alarm budget. The rate is taken one standard
error high, so that little history errs on the quiet side. It then replays the
history through the detector with both thresholds, so a team sees how many
alarms each would have raised.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

from ..model import Baseline, Outcome, Stream, baseline_for, segment_key, segments_of
from .arl import first_alarm, run_length, threshold_for
from .budget import thresholds
from .config import DAYS_30, STREAMS, DriftConfig, detector_key


@dataclass(frozen=True, slots=True)
class Calibration:
    detector: str
    segment: Mapping[str, str]
    stream: Stream
    records: int
    per_day: float
    baseline_rate: float
    observed_rate: float
    """Sampling-weighted rate over the history, one standard error high."""
    budget_threshold: float
    threshold: float
    expected_delay: float
    """Records needed, on average, to catch the design shift with ``threshold``."""
    replay_alarms_budget: int
    replay_alarms: int
    note: str = ""


def _alarms(ys: Sequence[bool], q0: float, q1: float, h: float) -> int:
    """Alarms a CUSUM restarted after each one raises over ``ys``."""
    count, rest = 0, ys
    while (at := first_alarm(rest, q0, q1, h)) is not None:
        count, rest = count + 1, rest[at + 1 :]
    return count


def calibrate(
    outcomes: Sequence[Outcome],
    baselines: Mapping[str, Baseline],
    config: DriftConfig,
    days: float,
    excluded: Mapping[str, Sequence[tuple[datetime, datetime]]] | None = None,
) -> list[Calibration]:
    """One calibration per detector seen in ``outcomes`` (the last ``days`` of history).

    ``excluded`` maps :func:`.detect.detector_key` to periods when its alert fired:
    their records are not in-control evidence.
    """
    excluded = excluded or {}
    streams: dict[str, tuple[dict[str, str], list[Outcome]]] = {}
    roots: dict[str, str] = {}
    for outcome in outcomes:
        root = segment_key(config.partition_of(outcome.labels))
        for segment in segments_of(outcome.labels, config.dimensions, config.partition):
            key = segment_key(segment)
            streams.setdefault(key, (segment, []))[1].append(outcome)
            roots[key] = root
    # A partition whose baseline is still building has nothing to calibrate against.
    streams = {k: v for k, v in streams.items() if roots[k] in baselines}
    per_day = {k: (segment, len(items) / days) for k, (segment, items) in streams.items()}
    if not per_day:
        return []
    cited = {k: sum(o.cited for o in items) / days for k, (_, items) in streams.items()}
    measured = {
        k: sum(o.observes("retrieval") for o in items) / days for k, (_, items) in streams.items()
    }
    budget = thresholds(per_day, baselines, config, {k: roots[k] for k in streams}, cited, measured)
    # The one budget of every partition, as the drift run splits it.
    detectors = max(1, sum(1 for _, _, folded in budget.values() if not folded))
    share = config.false_alarms / detectors
    result = []
    # Partition by partition, each overall first.
    for key, (segment, items) in sorted(
        streams.items(), key=lambda kv: (roots[kv[0]], kv[0] != roots[kv[0]], kv[0])
    ):
        for stream in STREAMS:
            dkey = detector_key(stream, segment)
            found = baseline_for(stream, baselines, key, roots[key])
            if dkey not in budget or found is None:
                continue  # a subset stream, off for this segment
            baseline = found[0]
            quiet = [
                o
                for o in items
                if o.observes(stream)
                and not any(start <= o.at <= end for start, end in excluded.get(dkey, ()))
            ]
            result.append(_one(dkey, segment, stream, quiet, baseline, config, days, share, budget))
    return result


def _one(
    dkey: str,
    segment: Mapping[str, str],
    stream: Stream,
    quiet: Sequence[Outcome],
    baseline: Baseline,
    config: DriftConfig,
    days: float,
    share: float,
    budget: Mapping[str, tuple[float, float, bool]],
) -> Calibration:
    q0 = baseline.rate_of(stream)
    q1 = min(q0 + config.shift_of(stream), 0.99)
    ys = [o.is_bad(stream) for o in quiet]
    weights = sum(o.weight for o in quiet)
    bad = sum(o.weight for o, y in zip(quiet, ys, strict=True) if y)
    n = len(quiet)
    rate = bad / weights if weights else q0
    observed = rate + math.sqrt(max(rate * (1 - rate), 1e-6) / max(n, 1))
    per_day = n / days
    target = per_day * DAYS_30 / share
    budget_h, _, folded = budget[dkey]
    note = ""
    try:
        h = max(budget_h, threshold_for(q0, q1, target, rate=max(observed, q0)))
    except ValueError:
        # The history runs above the design shift: no threshold is quiet and useful.
        h, note = budget_h, "history runs at or above baseline + shift: kept the budget threshold"
    if folded:
        note = note or "folded into overall: too little traffic for its own detector"
    return Calibration(
        detector=dkey,
        segment=dict(segment),
        stream=stream,
        records=n,
        per_day=round(per_day, 2),
        baseline_rate=round(q0, 4),
        observed_rate=round(observed, 4),
        budget_threshold=budget_h,
        threshold=h,
        expected_delay=round(run_length(q1, q0, q1, h), 1),
        replay_alarms_budget=_alarms(ys, q0, q1, budget_h),
        replay_alarms=_alarms(ys, q0, q1, h),
        note=note,
    )
