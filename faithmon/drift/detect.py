"""Production drift: Bernoulli CUSUMs per segment against a frozen baseline.

Pure functions over outcomes (one per scored record). The worker loads outcomes,
baselines and alert history from the store, calls :func:`detect`, and hands the
readings to the alert lifecycle.

- Four streams per segment: ``unsupported`` (the record has an unsupported claim;
  rule ``faithfulness_drift``), ``critical`` (an unsupported claim a severity rule
  marks critical; rule ``critical_drift``), ``citation`` (of the
  records whose answer cites, one with a wrong or unresolved citation; rule
  ``citation_drift``) and ``retrieval`` (of the records whose context relevance was
  measured, one whose chunks miss what the question asks; rule ``retrieval_drift``,
  which typically moves before faithfulness does). A record that cites nothing is no
  observation of the citation stream, so a segment that never cites has no citation
  detector; likewise a judge that measures no relevance has no retrieval detector.
- Each detector counts its bad records by cause (``retrieval`` or ``generation``, see
  :class:`faithmon.model.Relevance`): a ``faithfulness_drift`` alert names the dominant
  cause of the unsupported answers since its change point, with examples of each.
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
- Partitions: with ``tenant`` among the dimensions, each tenant's records are a
  partition of their own (its overall is ``{tenant: T}``, its segments add one label
  to that) and the records without a tenant are the partition whose overall is
  ``{}``. Baselines, falling back to the overall, folding, attribution and restarts
  all stay inside a partition; only the false-alarm budget is shared.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any, Literal

from ..model import (
    BAD_CITATIONS,
    Baseline,
    Claim,
    Evidence,
    FrozenBaselines,
    Outcome,
    Signal,
    Stream,
    baseline_for,
    claim_supported,
    segment_key,
    segments_of,
)
from .baseline import in_segment, wilson_interval
from .budget import thresholds
from .config import RULES, STREAMS, DriftConfig, Level, detector_key
from .state import DriftState, Folder, Live, Segment


@dataclass(frozen=True, slots=True)
class Reading:
    """One detector's state after a run: a segment and a stream."""

    segment: Mapping[str, str]
    baseline: Baseline
    baseline_source: Literal["own", "overall"]
    records: int
    """The stream's observations since the detector last restarted (on the citation
    stream: records whose answer cites)."""
    unsupported: float
    """Weighted count: the stream's bad records (unsupported, critical or miscited),
    corrected for sampling, scaled to ``records``."""
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
    examples: tuple[Outcome, ...] = ()
    """Bad records since the change point that the alert shows (critical first, newest first)."""
    partition: Mapping[str, str] = field(default_factory=dict)
    """The overall of the segment's partition: ``{}``, or ``{tenant: T}``."""
    causes: Mapping[str, float] = field(default_factory=dict)
    """Weighted count of the bad records by cause, scaled to ``records`` as ``unsupported``."""

    @property
    def cause_rates(self) -> dict[str, float]:
        """Points of the current rate each cause accounts for (``{"retrieval": 0.11,
        "generation": 0.03}`` of a rate of 0.14); bad records without a cause in none."""
        if not self.records:
            return {}
        return {c: round(w / self.records, 4) for c, w in sorted(self.causes.items())}

    @property
    def dominant_cause(self) -> str | None:
        """The cause of most bad records with one; None when none has a cause."""
        if not self.causes:
            return None
        return max(sorted(self.causes), key=lambda c: self.causes[c])

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
        # An explained or folded detector raises nothing of its own.
        level: Level = "ok" if self.explained_by is not None or self.folded else self.level
        low, high = wilson_interval(self.unsupported, self.records)
        recent_low, recent_high = wilson_interval(self.recent[1], self.recent[0])
        observed = self.baseline.records_of(self.stream)
        base_low, base_high = wilson_interval(self.baseline_rate * observed, observed)
        details: dict[str, Any] = {
            "stream": self.stream,
            "baseline_rate": round(self.baseline_rate, 4),
            "baseline_interval": [round(base_low, 4), round(base_high, 4)],
            "baseline_records": observed,
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
            "examples": [_example(o, self.stream, level != "ok") for o in self.examples],
        }
        if self.causes:
            # A team sees which half of the pipeline to fix.
            details["causes"] = self.cause_rates
            details["dominant_cause"] = self.dominant_cause
        if self.explained_by is not None:
            details["explained_by"] = dict(self.explained_by)
        if self.folded:
            details["folded_into"] = "overall"
        severity = "critical" if level == "firing" else "warning"
        return Signal(self.rule, self.segment, level, details, severity)


def _example(outcome: Outcome, stream: Stream, evidence: bool) -> dict[str, Any]:
    """An alert's example trace with its first unsupported claims (on the citation stream,
    its first miscited ones too); an alert that is not resolving also shows the evidence:
    the trace's chunk ids and the claims bad on its stream, with what they cite."""
    example: dict[str, Any] = {
        "trace_id": outcome.trace_id,
        "unsupported_claims": list(outcome.unsupported_claims[:3]),
    }
    if outcome.cause is not None:
        example["cause"] = outcome.cause
    if stream == "retrieval" and outcome.context_relevance is not None:
        example["context_relevance"] = outcome.context_relevance
    if stream == "citation":
        example["miscited_claims"] = list(outcome.miscited_claims[:3])
    found = outcome.evidence
    if evidence and found is not None:
        example["chunk_ids"] = list(found.chunk_ids)
        example["claims"] = [_claim(c, found, stream) for c in found.claims if _bad(c, stream)]
    return example


def _bad(claim: Claim, stream: Stream) -> bool:
    # One evidence serves every stream: the citation stream shows the miscited claims.
    if stream == "citation":
        return claim.citation in BAD_CITATIONS
    return not claim_supported(claim.verdict)


def _claim(claim: Claim, found: Evidence, stream: Stream) -> dict[str, Any]:
    shown: dict[str, Any] = {
        "text": claim.text,
        "verdict": claim.verdict,
        "critical": claim.critical,
        "chunk_id": found.cited(claim),
    }
    if stream == "citation":
        shown["citation"] = claim.citation
        shown["marked_chunk_ids"] = list(found.marked(claim))
    return shown


CAUSED: tuple[Stream, ...] = ("unsupported", "critical")
"""The streams whose bad records are unsupported answers, each with its cause."""


def _level(statistic: float, threshold: float) -> Level:
    if statistic >= threshold - 1e-9:
        return "firing"
    return "pending" if statistic >= threshold / 2 else "ok"


def _per_day(segment: Segment, clock: datetime) -> float:
    first = segment.first_at or clock
    days = max((clock - first).total_seconds() / 86400, 1 / 24)
    return segment.seen / days


def detect(
    outcomes: Sequence[Outcome],
    baselines: Mapping[str, Baseline],
    window_end: datetime,
    config: DriftConfig,
    now: datetime | None = None,
    since: Mapping[str, datetime] | None = None,
    ends: Mapping[str, datetime] | None = None,
) -> list[Reading]:
    """Run every detector over the outcomes after the baseline window.

    ``since`` maps :func:`detector_key` to the trace time a detector restarts
    from (its last resolved alert). ``now`` is the clock traffic rates are
    measured against (default: the newest outcome). ``ends`` maps a partition's
    overall key to the end of the window it was frozen over, where that is not
    ``window_end``; a partition without a baseline for its overall is left out
    (its baseline is still building). The outcomes are folded in the order given
    (see :mod:`.state`); the worker folds them run by run instead.
    """
    frozen = FrozenBaselines(
        window_end, window_end, baselines, {k: (e, e) for k, e in (ends or {}).items()}
    )
    state = DriftState(since=dict(since or {}))
    folder = Folder(state, frozen, config)
    for i, outcome in enumerate(outcomes, 1):
        folder.fold_one(outcome if outcome.seq else replace(outcome, seq=i))
    return read(state, frozen, config, now)


def read(
    state: DriftState,
    frozen: FrozenBaselines,
    config: DriftConfig,
    now: datetime | None = None,
) -> list[Reading]:
    """Every detector's reading from the folded state: thresholds from the traffic rates,
    levels, recovery, examples and attribution."""
    baselines = frozen.segments
    clock = now or state.newest or frozen.end
    streams = {
        key: segment
        for key, segment in state.segments.items()
        if segment.after and segment.root in baselines
    }
    rates = {k: (s.segment, _per_day(s, clock)) for k, s in streams.items()}
    cited = {k: _per_day(s, clock) * s.cited / s.seen for k, s in streams.items() if s.cited}
    measured = {
        k: _per_day(s, clock) * s.measured / s.seen for k, s in streams.items() if s.measured
    }
    roots = {k: s.root for k, s in streams.items()}
    limits = thresholds(rates, baselines, config, roots, cited, measured)
    subsets = {"citation": cited, "retrieval": measured}
    readings: dict[str, Reading] = {}
    for key, segment in streams.items():
        for kind in STREAMS:
            dkey = detector_key(kind, segment.segment)
            found = baseline_for(kind, baselines, key, segment.root)
            if dkey not in limits or found is None:
                continue  # a subset stream, off for this segment
            h, delay, folded = limits[dkey]
            reading = _read(
                kind,
                segment.segment,
                state.live.get(dkey) or Live(),
                state,
                *found,
                h,
                config,
                per_day=subsets[kind][key] if kind in subsets else rates[key][1],
                delay=delay,
                folded=folded,
            )
            readings[dkey] = replace(reading, partition=streams[segment.root].segment)
    for kind in STREAMS:
        _attribute(readings, state, kind)
    # Partition by partition, each overall first.
    return sorted(
        readings.values(),
        key=lambda r: (
            segment_key(r.partition),
            r.segment != r.partition,
            segment_key(r.segment),
            r.stream,
        ),
    )


def restart_points(
    outcomes: Sequence[Outcome],
    resets: Sequence[tuple[Stream, Mapping[str, str], datetime]],
    dimensions: Sequence[str],
    partition: str | None = None,
) -> dict[str, datetime]:
    """Detector key → trace time its CUSUM restarts from, after resolved alerts.

    A resolved alert restarts its own detector, and those of every segment its
    records belong to (overall, the routes and tenants a bad model served): their
    CUSUMs rose on the same records, and would otherwise fire for an episode that
    is over once the root no longer explains them. With a ``partition`` label
    (see :attr:`DriftConfig.partition`), only segments of the alert's partition.
    """
    since: dict[str, datetime] = {}

    def later(key: str, at: datetime) -> None:
        if key not in since or since[key] < at:
            since[key] = at

    def owner(labels: Mapping[str, str]) -> str | None:
        # As segments_of reads it: an empty value is no tenant.
        return (labels.get(partition) or None) if partition else None

    for stream, segment, at in resets:
        later(detector_key(stream, segment), at)
        # With partitions, {} is the untenanted overall, not every record.
        touched = {
            segment_key(s)
            for o in outcomes
            if o.at <= at and in_segment(o, segment) and owner(o.labels) == owner(segment)
            for s in segments_of(o.labels, dimensions, partition)
        }
        for key in touched:
            later(f"{stream}|{key}", at)
    return since


def _read(
    stream: Stream,
    segment: Mapping[str, str],
    live: Live,
    state: DriftState,
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
    recent_n = len(live.recent)
    recent_weight = sum(w for _, w in live.recent)
    recent_bad = (
        sum(w for bad, w in live.recent if bad) / recent_weight * recent_n if recent_weight else 0.0
    )
    _, recent_high = wilson_interval(recent_bad, recent_n)
    examples = tuple(state.examples[seq] for _, _, seq, _ in live.examples if seq in state.examples)
    scale = live.n / live.weight if live.weight else 0.0
    return Reading(
        # A cause says why a claim is unsupported: nothing of a citation or a retrieval miss.
        causes={c: w * scale for c, w in live.causes.items()} if stream in CAUSED else {},
        segment=dict(segment),
        baseline=baseline,
        baseline_source=source,
        records=live.n,
        unsupported=live.bad / live.weight * live.n if live.weight else 0.0,
        statistic=live.statistic,
        level=_level(live.statistic, threshold),
        threshold=threshold,
        stream=stream,
        change_at=live.change_at,
        last_at=live.last_at,
        recovered=bool(recent_n) and recent_high < q1,
        recent=(recent_n, recent_bad),
        per_day=per_day,
        expected_delay=delay,
        folded=folded,
        examples=examples if live.change_at is not None else (),
    )


def _attribute(readings: dict[str, Reading], state: DriftState, stream: Stream) -> None:
    mine = {k: r for k, r in readings.items() if r.stream == stream}
    drifting = sorted(
        (r for r in mine.values() if r.level != "ok" and not r.folded),
        # Most concentrated first; on a tie a labelled segment explains its overall, not
        # the other way round.
        key=lambda r: (-(r.rate - r.baseline_rate), r.records, r.segment == r.partition),
    )
    # Only a segment of its own partition explains a reading: never another tenant's. The
    # CUSUM of a reading's records outside a root is kept by the fold (``Segment.rest``).
    roots_by_partition: dict[str, list[Reading]] = {}
    for reading in drifting:
        rest = state.segments[segment_key(reading.segment)].rest[stream]
        roots = roots_by_partition.setdefault(segment_key(reading.partition), [])
        for root in roots:
            if rest.get(segment_key(root.segment), 0.0) < reading.threshold / 2:
                key = detector_key(stream, reading.segment)
                readings[key] = replace(reading, explained_by=dict(root.segment))
                break
        else:
            roots.append(reading)
