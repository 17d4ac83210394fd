"""Production drift: Bernoulli CUSUMs per segment against a frozen baseline.

Pure functions over outcomes (one per scored record). The worker loads outcomes,
baselines and alert history from the store, calls :func:`detect`, and hands the
readings to the alert lifecycle.

- Two streams per segment: ``unsupported`` (the record has an unsupported claim;
  rule ``faithfulness_drift``) and ``critical`` (an unsupported claim about a
  number, amount, date or dosage; rule ``critical_drift``).
- The baseline window is the oldest stretch of scored records that holds at
  least ``baseline_records`` records and spans ``baseline_days``; once
  established it is frozen. A segment with fewer than ``segment_min_baseline``
  records in it (a model version that did not exist yet) is compared with the
  overall baseline.
- Rates are Jeffreys estimates (u + 0.5) / (n + 1), floored at ``MIN_RATE`` so
  a spotless baseline does not make one bad answer an alarm. Each outcome
  carries its sampling weight (how many production records it stands for), so
  rates and CUSUM steps are corrected for stratified sampling.
- Thresholds come from a false-alarm budget: ``false_alarms`` expected false
  alarms per 30 days, split evenly across the active detectors; each
  detector's threshold is the one whose in-control run length is its traffic
  over 30 days divided by its share (computed exactly, see :mod:`.arl`).
  A segment whose traffic is too thin to catch the design shift within
  ``max_delay_days`` folds into its parent (overall): it raises no alert of its
  own and takes no share of the budget.
- Pending at h/2, firing at h; the change point is where S last left zero.
  A firing detector is *recovered* when the upper 95% bound of its recent
  rate is back below baseline + design shift (the data rule out the shift); the alert
  lifecycle resolves it after several recovered runs, and the CUSUM restarts
  from there.
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

from ..model import Outcome, Signal, segment_key
from .arl import increments, run_length, threshold_for

Stream = Literal["unsupported", "critical"]

RULE = "faithfulness_drift"
CRITICAL_RULE = "critical_drift"
NO_DATA_RULE = "no_data"
RULES: dict[Stream, str] = {"unsupported": RULE, "critical": CRITICAL_RULE}
MIN_RATE = 0.01
MAX_EXAMPLES = 3
DAYS_30 = 30.0

Level = Literal["ok", "pending", "firing"]
STREAMS: tuple[Stream, ...] = ("unsupported", "critical")


@dataclass(frozen=True, slots=True)
class DriftConfig:
    dimensions: tuple[str, ...]
    threshold: float | None = None
    """A fixed CUSUM threshold for every detector; None derives each from the budget."""
    false_alarms: float = 1.0
    """Expected false alarms per 30 days across all active detectors."""
    wobble: float = 0.07
    """Least in-control wobble of a rate, relative to it, that thresholds allow for."""
    shift: float = 0.08
    critical_shift: float = 0.04
    baseline_records: int = 2000
    baseline_days: float = 7.0
    segment_min_baseline: int = 100
    max_delay_days: float = 7.0
    recovery_records: int = 200
    no_data_hours: float = 6.0
    no_data_dimensions: tuple[str, ...] = ("service", "route", "tenant")
    calibrated: Mapping[str, float] = field(default_factory=dict)
    """Thresholds set by `faithmon drift calibrate`, by :func:`detector_key`."""

    def shift_of(self, stream: Stream) -> float:
        return self.shift if stream == "unsupported" else self.critical_shift


def detector_key(stream: Stream, segment: Mapping[str, str]) -> str:
    return f"{stream}|{segment_key(segment)}"


@dataclass(frozen=True, slots=True)
class Baseline:
    records: int
    unsupported: int
    critical: int = 0
    spread: float = 0.0
    """How much the unsupported rate moved within the window beyond binomial noise (SD)."""
    critical_spread: float = 0.0

    def rate_of(self, stream: Stream) -> float:
        count = self.unsupported if stream == "unsupported" else self.critical
        return max(MIN_RATE, (count + 0.5) / (self.records + 1))

    def in_control_spread(self, stream: Stream, wobble: float, shift: float) -> float:
        """SD of the rate a detector sees while nothing is wrong: the baseline's own
        estimation error, and its wobble (measured, but at least ``wobble`` × rate).

        At most a quarter of the design shift: past that a small baseline is too
        uncertain for any threshold to be both quiet and useful, and the budget is
        not kept (`faithmon drift calibrate` can refine it once history accrues).
        """
        q0 = self.rate_of(stream)
        moved = self.spread if stream == "unsupported" else self.critical_spread
        spread = math.sqrt(max(moved, wobble * q0) ** 2 + q0 * (1 - q0) / (self.records + 1))
        return min(spread, shift / 4)

    @property
    def rate(self) -> float:
        return self.rate_of("unsupported")


@dataclass(frozen=True, slots=True)
class Reading:
    """One detector's state after a run: a segment and a stream."""

    segment: Mapping[str, str]
    baseline: Baseline
    baseline_source: Literal["own", "overall"]
    records: int
    unsupported: float
    """Weighted count: unsupported records, corrected for sampling, scaled to ``records``."""
    statistic: float
    level: Level
    threshold: float = 0.0
    stream: Stream = "unsupported"
    change_at: datetime | None = None
    last_at: datetime | None = None
    recovered: bool = False
    recent: tuple[int, float] = (0, 0.0)
    """(records, weighted bad count) of the recent window the recovery is judged on."""
    per_day: float = 0.0
    expected_delay: float | None = None
    """Records the detector needs, on average, to catch the design shift."""
    folded: bool = False
    explained_by: Mapping[str, str] | None = None
    examples: tuple[Mapping[str, Any], ...] = field(default_factory=tuple)

    @property
    def rate(self) -> float:
        return self.unsupported / self.records if self.records else 0.0

    @property
    def rule(self) -> str:
        return RULES[self.stream]

    @property
    def baseline_rate(self) -> float:
        return self.baseline.rate_of(self.stream)

    def signal(self) -> Signal:
        low, high = wilson_interval(self.unsupported, self.records)
        recent_low, recent_high = wilson_interval(self.recent[1], self.recent[0])
        base_low, base_high = wilson_interval(
            self.baseline_rate * self.baseline.records, self.baseline.records
        )
        details: dict[str, Any] = {
            "stream": self.stream,
            "baseline_rate": round(self.baseline_rate, 4),
            "baseline_interval": [round(base_low, 4), round(base_high, 4)],
            "baseline_records": self.baseline.records,
            "baseline_source": self.baseline_source,
            "current_rate": round(self.rate, 4),
            "current_interval": [round(low, 4), round(high, 4)],
            "records": self.records,
            "unsupported": round(self.unsupported, 2),
            "recent_interval": [round(recent_low, 4), round(recent_high, 4)],
            "recovered": self.recovered,
            "statistic": round(self.statistic, 3),
            "threshold": self.threshold,
            "change_at": self.change_at.isoformat() if self.change_at else None,
            "last_at": self.last_at.isoformat() if self.last_at else None,
            "examples": list(self.examples),
        }
        level: Level = self.level
        if self.explained_by is not None:
            details["explained_by"] = dict(self.explained_by)
            level = "ok"
        if self.folded:
            details["folded_into"] = "overall"
            level = "ok"
        severity = "critical" if level == "firing" else "warning"
        return Signal(self.rule, self.segment, level, details, severity)


def wilson_interval(successes: float, trials: float, z: float = 1.96) -> tuple[float, float]:
    """95% Wilson score interval of a rate (sensible even at 0 or n successes)."""
    if trials <= 0:
        return 0.0, 1.0
    p = min(1.0, max(0.0, successes / trials))
    denominator = 1 + z * z / trials
    centre = (p + z * z / (2 * trials)) / denominator
    half = z * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials)) / denominator
    return max(0.0, centre - half), min(1.0, centre + half)


def segments_of(labels: Mapping[str, str], dimensions: Sequence[str]) -> list[dict[str, str]]:
    """The overall segment plus one segment per monitored label the record has."""
    return [{}] + [{d: labels[d]} for d in dimensions if labels.get(d)]


def _matches(outcome: Outcome, segment: Mapping[str, str]) -> bool:
    return all(outcome.labels.get(k) == v for k, v in segment.items())


def _bad(outcome: Outcome, stream: Stream) -> bool:
    return outcome.unsupported if stream == "unsupported" else outcome.critical


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


BUCKETS = 12
"""Consecutive equal-count stretches of the baseline window its wobble is measured on."""


def excess_spread(items: Sequence[tuple[float, bool]]) -> float:
    """SD of the rate across consecutive stretches of (weight, bad), beyond binomial noise."""
    chunks = min(BUCKETS, len(items) // 30)
    if chunks < 4:
        return 0.0
    size = len(items) // chunks
    rates, sizes = [], []
    for c in range(chunks):
        part = items[c * size : (c + 1) * size] if c < chunks - 1 else items[c * size :]
        weight = sum(w for w, _ in part)
        rates.append(sum(w for w, bad in part if bad) / weight if weight else 0.0)
        sizes.append(len(part))
    mean = sum(r * n for r, n in zip(rates, sizes, strict=True)) / sum(sizes)
    observed = sum((r - mean) ** 2 for r in rates) / (chunks - 1)
    noise = mean * (1 - mean) * sum(1 / n for n in sizes) / chunks
    # One standard error of the variance estimate below the point: a steady window
    # reads as steady (the wobble floor covers it) rather than as chance spread.
    return math.sqrt(max(0.0, observed - noise * (1 + math.sqrt(2 / (chunks - 1)))))


def compute_baselines(
    outcomes: Sequence[Outcome], window_end: datetime, config: DriftConfig
) -> dict[str, Baseline]:
    """Per segment: records, sampling-weighted bad counts scaled to those records, and
    how much each rate wobbled within the window."""
    items: dict[str, list[Outcome]] = {}
    for outcome in outcomes:
        if outcome.at > window_end:
            break
        for segment in segments_of(outcome.labels, config.dimensions):
            items.setdefault(segment_key(segment), []).append(outcome)
    result = {}
    for key, group in items.items():
        n = len(group)
        if key != "" and n < config.segment_min_baseline:
            continue
        w = sum(o.weight for o in group)
        u = sum(o.weight for o in group if o.unsupported)
        c = sum(o.weight for o in group if o.critical)
        result[key] = Baseline(
            n,
            round(u / w * n),
            round(c / w * n),
            round(excess_spread([(o.weight, o.unsupported) for o in group]), 5),
            round(excess_spread([(o.weight, o.critical) for o in group]), 5),
        )
    return result


def cusum(
    ys: Sequence[bool], q0: float, q1: float, weights: Sequence[float] | None = None
) -> tuple[float, int | None]:
    """Final statistic and the index where it last rose from zero (None if it is zero).

    Steps are :func:`.arl.increments`, times each record's weight relative to the
    mean weight (1 when unweighted).
    """
    up, down = increments(q0, q1)
    scale = len(weights) / sum(weights) if weights else 1.0
    statistic = 0.0
    start: int | None = None
    for i, y in enumerate(ys):
        step = up if y else down
        if weights:
            step *= weights[i] * scale
        statistic = max(0.0, statistic + step)
        if statistic <= 1e-12:
            statistic, start = 0.0, None
        elif start is None:
            start = i
    return statistic, start


def first_alarm(ys: Sequence[bool], q0: float, q1: float, threshold: float) -> int | None:
    """Index of the record at which the CUSUM first reaches ``threshold`` (benchmarks, replay)."""
    up, down = increments(q0, q1)
    statistic = 0.0
    for i, y in enumerate(ys):
        statistic = max(0.0, statistic + (up if y else down))
        if statistic >= threshold - 1e-9:
            return i
    return None


def _level(statistic: float, threshold: float) -> Level:
    if statistic >= threshold - 1e-9:
        return "firing"
    return "pending" if statistic >= threshold / 2 else "ok"


def _weighted(outcomes: Sequence[Outcome], stream: Stream) -> float:
    """Bad records, corrected for sampling and scaled to the number of outcomes."""
    total = sum(o.weight for o in outcomes)
    if not total:
        return 0.0
    return sum(o.weight for o in outcomes if _bad(o, stream)) / total * len(outcomes)


@dataclass(slots=True)
class _Stream:
    segment: dict[str, str]
    outcomes: list[Outcome]
    """Its records after the baseline window."""
    first_at: datetime
    seen: int = 0
    """All its records, the window's included: its traffic is measured on them."""


def _per_day(stream: _Stream, clock: datetime) -> float:
    days = max((clock - stream.first_at).total_seconds() / 86400, 1 / 24)
    return stream.seen / days


def thresholds(
    streams: Mapping[str, tuple[Mapping[str, str], float]],
    baselines: Mapping[str, Baseline],
    config: DriftConfig,
) -> dict[str, tuple[float, float, bool]]:
    """detector key → (threshold, expected delay in records, folded).

    ``streams`` maps segment key → (segment, records per day). The budget is split
    across the detectors that are not folded; folding frees budget for the rest,
    so one more pass settles it.
    """
    overall = baselines[""]
    detectors = [
        (stream, key, segment, per_day)
        for key, (segment, per_day) in streams.items()
        for stream in STREAMS
    ]
    folded: set[str] = set()
    result: dict[str, tuple[float, float, bool]] = {}
    for _ in range(2):
        active = max(1, len(detectors) - len(folded))
        share = config.false_alarms / active
        result = {}
        for stream, key, segment, per_day in detectors:
            dkey = detector_key(stream, segment)
            q0 = baselines.get(key, overall).rate_of(stream)
            q1 = min(q0 + config.shift_of(stream), 0.99)
            spread = baselines.get(key, overall).in_control_spread(
                stream, config.wobble, config.shift_of(stream)
            )
            if config.threshold is not None:
                h = config.threshold
            elif dkey in config.calibrated:
                h = config.calibrated[dkey]
            else:
                h = threshold_for(q0, q1, per_day * DAYS_30 / share, spread=spread)
            delay = run_length(q1, q0, q1, h)
            too_slow = key != "" and delay > per_day * config.max_delay_days
            result[dkey] = (h, delay, too_slow)
        now_folded = {k for k, (_, _, f) in result.items() if f}
        if now_folded == folded:
            break
        folded = now_folded
    return result


def detect(
    outcomes: Sequence[Outcome],
    baselines: Mapping[str, Baseline],
    window_end: datetime,
    config: DriftConfig,
    now: datetime | None = None,
    since: Mapping[str, datetime] | None = None,
) -> list[Reading]:
    """Run every detector over the outcomes after the baseline window.

    ``since`` maps :func:`detector_key` to the trace time a detector restarts
    from (its last resolved alert). ``now`` is the clock traffic rates are
    measured against (default: the newest outcome).
    """
    since = since or {}
    overall = baselines[""]
    clock = now or (outcomes[-1].at if outcomes else window_end)
    streams: dict[str, _Stream] = {}
    for outcome in outcomes:
        for segment in segments_of(outcome.labels, config.dimensions):
            key = segment_key(segment)
            stream = streams.get(key)
            if stream is None:
                stream = streams[key] = _Stream(segment, [], outcome.at)
            stream.seen += 1
            if outcome.at > window_end:
                stream.outcomes.append(outcome)
    streams = {k: s for k, s in streams.items() if s.outcomes}
    rates = {k: (s.segment, _per_day(s, clock)) for k, s in streams.items()}
    if "" not in rates:
        return []
    limits = thresholds(rates, baselines, config)
    readings: dict[str, Reading] = {}
    for key, stream in streams.items():
        own = baselines.get(key)
        source: Literal["own", "overall"] = "own" if own is not None else "overall"
        baseline = own if own is not None else overall
        for kind in STREAMS:
            dkey = detector_key(kind, stream.segment)
            start = since.get(dkey)
            live = (
                stream.outcomes if start is None else [o for o in stream.outcomes if o.at > start]
            )
            h, delay, folded = limits[dkey]
            readings[dkey] = _read(
                kind,
                stream.segment,
                live,
                baseline,
                source,
                h,
                config,
                per_day=rates[key][1],
                delay=delay,
                folded=folded,
            )
    for kind in STREAMS:
        _attribute(readings, streams, kind, config)
    return sorted(readings.values(), key=lambda r: (segment_key(r.segment), r.stream))


def restart_points(
    outcomes: Sequence[Outcome],
    resets: Sequence[tuple[Stream, Mapping[str, str], datetime]],
    dimensions: Sequence[str],
) -> dict[str, datetime]:
    """Detector key → trace time its CUSUM restarts from, after resolved alerts.

    A resolved alert restarts its own detector, and those of every segment its
    records belong to (overall, the routes and tenants a bad model served): their
    CUSUMs rose on the same records, and would otherwise fire for an episode that
    is over once the root no longer explains them.
    """
    since: dict[str, datetime] = {}

    def later(key: str, at: datetime) -> None:
        if key not in since or since[key] < at:
            since[key] = at

    for stream, segment, at in resets:
        later(detector_key(stream, segment), at)
        touched = {
            segment_key(s)
            for o in outcomes
            if o.at <= at and _matches(o, segment)
            for s in segments_of(o.labels, dimensions)
        }
        for key in touched:
            later(f"{stream}|{key}", at)
    return since


def _read(
    stream: Stream,
    segment: Mapping[str, str],
    outcomes: Sequence[Outcome],
    baseline: Baseline,
    source: Literal["own", "overall"],
    threshold: float,
    config: DriftConfig,
    *,
    per_day: float,
    delay: float,
    folded: bool,
) -> Reading:
    q0 = baseline.rate_of(stream)
    q1 = min(q0 + config.shift_of(stream), 0.99)
    weights = [o.weight for o in outcomes]
    uniform = all(w == weights[0] for w in weights)
    statistic, start = cusum(
        [_bad(o, stream) for o in outcomes], q0, q1, None if uniform else weights
    )
    recent = outcomes[-config.recovery_records :]
    recent_bad = _weighted(recent, stream)
    _, recent_high = wilson_interval(recent_bad, len(recent))
    examples = tuple(
        {"trace_id": o.trace_id, "unsupported_claims": list(o.unsupported_claims[:3])}
        for o in sorted(
            (o for o in outcomes if _bad(o, stream)),
            key=lambda o: (o.critical, o.at),
            reverse=True,
        )
    )[:MAX_EXAMPLES]
    return Reading(
        segment=dict(segment),
        baseline=baseline,
        baseline_source=source,
        records=len(outcomes),
        unsupported=_weighted(outcomes, stream),
        statistic=statistic,
        level=_level(statistic, threshold),
        threshold=threshold,
        stream=stream,
        change_at=outcomes[start].at if start is not None else None,
        last_at=outcomes[-1].at if outcomes else None,
        recovered=bool(recent) and recent_high < q1,
        recent=(len(recent), recent_bad),
        per_day=per_day,
        expected_delay=delay,
        folded=folded,
        examples=examples if start is not None else (),
    )


def _attribute(
    readings: dict[str, Reading],
    streams: Mapping[str, _Stream],
    stream: Stream,
    config: DriftConfig,
) -> None:
    mine = {k: r for k, r in readings.items() if r.stream == stream}
    drifting = sorted(
        (r for r in mine.values() if r.level != "ok" and not r.folded),
        # Most concentrated first; on a tie a labelled segment explains overall, not
        # the other way round.
        key=lambda r: (-(r.rate - r.baseline_rate), r.records, not r.segment),
    )
    roots: list[Reading] = []
    for reading in drifting:
        outcomes = streams[segment_key(reading.segment)].outcomes
        for root in roots:
            rest = [_bad(o, stream) for o in outcomes if not _matches(o, root.segment)]
            q0 = reading.baseline_rate
            statistic, _ = cusum(rest, q0, min(q0 + config.shift_of(stream), 0.99))
            if statistic < reading.threshold / 2:
                key = detector_key(stream, reading.segment)
                readings[key] = replace(reading, explained_by=dict(root.segment))
                break
        else:
            roots.append(reading)


@dataclass(frozen=True, slots=True)
class Silence:
    """A segment that had traffic and has gone quiet."""

    segment: Mapping[str, str]
    last_at: datetime
    per_day: float


def silences(
    outcomes: Sequence[Outcome],
    config: DriftConfig,
    now: datetime,
    lookback_days: float = 7.0,
) -> tuple[list[Signal], list[Silence]]:
    """``no_data`` signals: one per watched segment seen in the last ``lookback_days``.

    A segment is silent when it has had no scored record for ``no_data_hours``
    although its usual traffic would have brought at least five in that time
    (so a segment with a handful of records a day is not called silent).
    """
    window = timedelta(hours=config.no_data_hours)
    start = now - timedelta(days=lookback_days)
    seen: dict[str, _Stream] = {}
    last_at: dict[str, datetime] = {}
    for outcome in outcomes:
        if outcome.at < start:
            continue
        for segment in segments_of(outcome.labels, config.no_data_dimensions):
            key = segment_key(segment)
            seen.setdefault(key, _Stream(segment, [], outcome.at)).seen += 1
            last_at[key] = outcome.at
    signals: list[Signal] = []
    silent: list[Silence] = []
    for key, stream in seen.items():
        segment, count, first, last = stream.segment, stream.seen, stream.first_at, last_at[key]
        active_days = max((last - first).total_seconds() / 86400, 1 / 24)
        per_day = count / active_days
        expected = per_day * config.no_data_hours / 24
        quiet = now - last >= window and expected >= 5
        details = {
            "last_at": last.isoformat(),
            "silent_hours": round((now - last).total_seconds() / 3600, 1),
            "usual_per_day": round(per_day, 1),
            "no_data_hours": config.no_data_hours,
        }
        if quiet:
            silent.append(Silence(segment, last, per_day))
        signals.append(
            Signal(NO_DATA_RULE, segment, "firing" if quiet else "ok", details, "warning")
        )
    return signals, silent
