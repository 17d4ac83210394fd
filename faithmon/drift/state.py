"""The detectors as a fold: the state a drift run keeps, so the next run reads only new outcomes.

Outcomes are folded in trace order (start, then trace id), as one pass over every
outcome would: the state is a function of the outcomes and the restarts alone, whatever
the order workers scored them in or the runs that folded them, so the worker's runs, a
rebuild (`faithmon drift rebuild`) and a single process agree. The kept state covers
every outcome up to its ``horizon``, a trace time before which no new outcome is
expected; each run reads the outcomes after it, folds those now below the new horizon
into the kept state, and reads the detectors with the rest folded onto a copy. What each
detector keeps:

- ``Live``: the weighted CUSUM since its last restart, where it last rose from zero,
  the counts its rate is read from, the recent window recovery is judged on, and the
  best examples (critical first, newest first), named by evaluation id.
- ``Segment``: records seen, and of them those whose answer cites (its traffic rates
  size its thresholds) and, per stream, the unrestarted unweighted CUSUM and one CUSUM
  per other segment of its partition over its records outside that segment (attribution
  asks for these). A record whose answer cites nothing is no observation of the
  citation stream, and a segment with no citation baseline (see
  :func:`faithmon.model.baseline_for`) folds none.
- Per label combination the first trace time (the segments a restart reaches), and
  hourly counts per silence-watched segment (``no_data``).

A restart (a resolved alert's ``reset_at``) restarts its own detector and those of every
segment its records up to ``reset_at`` belong to: an outcome folded later at or before
``reset_at`` still reaches them. A restart older than the horizon folds again, from
stored outcomes, what its detectors saw after it. Weights are the sampling weights
known when an outcome is folded, each scaled by the running mean weight of its detector.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from ..model import FrozenBaselines, Outcome, Stream, baseline_for, segment_key, segments_of
from .arl import increments
from .config import MAX_EXAMPLES, STREAMS, DriftConfig, detector_key

QUIET_DAYS = 8
"""Hourly counts kept per watched segment: the silence lookback (7 days) and an hour."""


@dataclass(slots=True)
class Live:
    """One detector (stream, segment) since its last restart."""

    n: int = 0
    weight: float = 0.0
    bad: float = 0.0
    statistic: float = 0.0
    change_at: datetime | None = None
    last_at: datetime | None = None
    recent: deque[tuple[bool, float]] = field(default_factory=deque)
    examples: list[tuple[bool, datetime, int, str]] = field(default_factory=list)
    """(critical, trace time, evaluation id, cause or ""): the best examples of each cause."""
    causes: dict[str, float] = field(default_factory=dict)
    """Weight of the bad records by their cause (``retrieval``, ``generation``)."""


@dataclass(slots=True)
class Segment:
    segment: dict[str, str]
    root: str
    seen: int = 0
    first_at: datetime | None = None
    after: int = 0
    """Outcomes after its partition's baseline window."""
    cited: int = 0
    """Records seen whose answer cites (the citation stream's traffic)."""
    measured: int = 0
    """Records seen whose context relevance was measured (the retrieval stream's traffic)."""
    free: dict[str, float] = field(default_factory=lambda: dict.fromkeys(STREAMS, 0.0))
    rest: dict[str, dict[str, float]] = field(default_factory=lambda: {s: {} for s in STREAMS})


@dataclass(frozen=True, slots=True)
class Reset:
    stream: Stream
    segment: Mapping[str, str]
    at: datetime

    @property
    def key(self) -> str:
        return f"{self.stream}|{segment_key(self.segment)}|{self.at.isoformat()}"


@dataclass(frozen=True, slots=True)
class _Plan:
    labelset: str
    projection: dict[str, str]
    root: str
    segments: list[tuple[dict[str, str], str]]
    detectors: dict[str, list[str]]
    inside: frozenset[str]
    quiet: list[tuple[str, dict[str, str]]]


History = Callable[[datetime, datetime], Iterable[Outcome]]
"""(after, up to) trace times → the outcomes between, in trace order: what a restart
older than the horizon reads again."""


@dataclass(slots=True)
class DriftState:
    segments: dict[str, Segment] = field(default_factory=dict)
    members: dict[str, list[str]] = field(default_factory=dict)
    live: dict[str, Live] = field(default_factory=dict)
    since: dict[str, datetime] = field(default_factory=dict)
    resets: dict[str, Reset] = field(default_factory=dict)
    labelsets: dict[str, tuple[dict[str, str], datetime]] = field(default_factory=dict)
    quiet: dict[str, dict[datetime, list[Any]]] = field(default_factory=dict)
    quiet_segments: dict[str, dict[str, str]] = field(default_factory=dict)
    newest: datetime | None = None
    horizon: datetime | None = None
    """Every outcome up to this trace time is folded (None: none yet)."""
    watermark: int = 0
    """The newest evaluation id when the horizon moved: one above it that lands at or
    before the horizon arrived late (the state is then rebuilt)."""
    examples: dict[int, Outcome] = field(default_factory=dict)
    """Outcomes named by the detectors' examples (not stored: read again by seq)."""

    def roots(self) -> set[str]:
        return set(self.members)


class Folder:
    """Folds outcomes into a state against one set of frozen baselines."""

    def __init__(
        self, state: DriftState, baselines: FrozenBaselines | None, config: DriftConfig
    ) -> None:
        self.state = state
        self.baselines = baselines
        self.config = config
        self._steps: dict[tuple[str, Stream], tuple[float, float] | None] = {}
        self._plans: dict[tuple[tuple[str, str], ...], _Plan] = {}
        self._watched = (*config.dimensions, *((config.partition,) if config.partition else ()))
        self._wanted = tuple(dict.fromkeys((*self._watched, *config.no_data_dimensions)))

    def _step(self, key: str, root: str, stream: Stream) -> tuple[float, float] | None:
        """The CUSUM's (up, down) moves of a detector; None: it has no baseline."""
        if (key, stream) in self._steps:
            return self._steps[(key, stream)]
        assert self.baselines is not None
        found = baseline_for(stream, self.baselines.segments, key, root)
        steps = None
        if found is not None:
            q0 = found[0].rate_of(stream)
            steps = increments(q0, min(q0 + self.config.shift_of(stream), 0.99))
        self._steps[(key, stream)] = steps
        return steps

    def _end(self, root: str) -> datetime | None:
        if self.baselines is None or root not in self.baselines.segments:
            return None
        return self.baselines.window_of(root)[1]

    def _register(self, segment: dict[str, str], key: str, root: str) -> Segment:
        state = self.state
        found = Segment(segment, root)
        peers = state.members.setdefault(root, [])
        for other in peers:
            # Every record of `other` so far was outside the new segment.
            mine = state.segments[other]
            for stream in STREAMS:
                mine.rest[stream][key] = mine.free[stream]
                found.rest[stream][other] = 0.0
        peers.append(key)
        state.segments[key] = found
        return found

    def fold(self, outcomes: Iterable[Outcome]) -> None:
        for outcome in outcomes:
            self.fold_one(outcome)

    def _plan(self, outcome: Outcome) -> _Plan:
        """What an outcome's labels make of it: computed once per distinct label set."""
        labels = tuple((k, v) for k in self._wanted if (v := outcome.labels.get(k)))
        plan = self._plans.get(labels)
        if plan is None:
            config = self.config
            full = dict(labels)
            projection = {k: v for k, v in labels if k in self._watched}
            segments = segments_of(full, config.dimensions, config.partition)
            keys = [segment_key(s) for s in segments]
            quiet = segments_of(full, config.no_data_dimensions, config.partition)
            plan = self._plans[labels] = _Plan(
                segment_key(projection),
                projection,
                segment_key(config.partition_of(full)),
                list(zip(segments, keys, strict=True)),
                {stream: [detector_key(stream, s) for s in segments] for stream in STREAMS},
                frozenset(keys),
                [(segment_key(q), q) for q in quiet],
            )
        return plan

    def fold_one(self, outcome: Outcome) -> None:
        state = self.state
        at = outcome.at
        if state.newest is None or at > state.newest:
            state.newest = at
        plan = self._plan(outcome)
        self._remember(outcome, plan)
        self._reach(outcome, plan)
        root = plan.root
        for segment, key in plan.segments:
            found = state.segments.get(key) or self._register(segment, key, root)
            found.seen += 1
            found.cited += outcome.cited
            found.measured += outcome.observes("retrieval")
            if found.first_at is None or at < found.first_at:
                found.first_at = at
        end = self._end(root)
        if end is None or at <= end:
            return
        inside = plan.inside
        observed = [(s, outcome.is_bad(s)) for s in STREAMS if outcome.observes(s)]
        for index, (_, key) in enumerate(plan.segments):
            found = state.segments[key]
            found.after += 1
            for stream, bad in observed:
                steps = self._step(key, root, stream)
                if steps is None:
                    continue
                step = steps[0] if bad else steps[1]
                found.free[stream] = _rise(found.free[stream], step)
                rest = found.rest[stream]
                for other, value in rest.items():
                    if other not in inside:
                        rest[other] = _rise(value, step)
                self._live(plan.detectors[stream][index], outcome, stream, step)

    def _live(self, dkey: str, outcome: Outcome, stream: Stream, step: float) -> None:
        state = self.state
        start = state.since.get(dkey)
        if start is not None and outcome.at <= start:
            return
        live = state.live.get(dkey)
        if live is None:
            live = state.live[dkey] = Live(recent=deque(maxlen=self.config.recovery_records))
        bad = outcome.is_bad(stream)
        weight = outcome.weight
        live.n += 1
        live.weight += weight
        if bad:
            live.bad += weight
        # Relative to the running mean weight: uniform weights leave the steps as they are.
        scaled = step if weight == live.weight / live.n else step * weight * live.n / live.weight
        live.statistic = _rise(live.statistic, scaled)
        if live.statistic == 0.0:
            live.change_at = None
        elif live.change_at is None:
            live.change_at = outcome.at
        if live.last_at is None or outcome.at > live.last_at:
            live.last_at = outcome.at
        live.recent.append((bad, weight))
        if bad:
            cause = outcome.cause or ""
            if cause:
                live.causes[cause] = live.causes.get(cause, 0.0) + weight
            ranked = [*live.examples, (outcome.critical, outcome.at, outcome.seq, cause)]
            ranked.sort(key=lambda e: (e[0], e[1]), reverse=True)
            live.examples = _best_of_each(ranked)
            state.examples[outcome.seq] = outcome

    def _remember(self, outcome: Outcome, plan: _Plan) -> None:
        state = self.state
        known = state.labelsets.get(plan.labelset)
        if known is None or outcome.at < known[1]:
            state.labelsets[plan.labelset] = (plan.projection, outcome.at)
        hour = outcome.at.replace(minute=0, second=0, microsecond=0)
        for skey, segment in plan.quiet:
            buckets = state.quiet.get(skey)
            if buckets is None:
                state.quiet_segments[skey] = segment
                buckets = state.quiet[skey] = {}
            bucket = buckets.get(hour)
            if bucket is None:
                buckets[hour] = [1, outcome.at, outcome.at]
            else:
                bucket[0] += 1
                if outcome.at < bucket[1]:
                    bucket[1] = outcome.at
                if outcome.at > bucket[2]:
                    bucket[2] = outcome.at

    def prune(self) -> None:
        """Drop hourly counts older than the silence lookback, and unnamed examples."""
        state = self.state
        if state.newest is not None:
            oldest = state.newest - timedelta(days=QUIET_DAYS)
            for buckets in state.quiet.values():
                for hour in [h for h in buckets if h < oldest]:
                    del buckets[hour]
        named = {seq for live in state.live.values() for _, _, seq, _ in live.examples}
        state.examples = {seq: o for seq, o in state.examples.items() if seq in named}

    def _reach(self, outcome: Outcome, plan: _Plan) -> None:
        """Restarts at or after this outcome reach its segments' detectors too."""
        state = self.state
        for reset in state.resets.values():
            if outcome.at > reset.at or not self._owns(reset, plan.projection):
                continue
            for dkey in plan.detectors[reset.stream]:
                self._restart(dkey, reset.at)

    def _owns(self, reset: Reset, labels: Mapping[str, str]) -> bool:
        partition = self.config.partition
        if partition and (labels.get(partition) or None) != (reset.segment.get(partition) or None):
            return False
        return all(labels.get(k) == v for k, v in reset.segment.items())

    def _restart(self, dkey: str, at: datetime) -> bool:
        state = self.state
        if dkey in state.since and state.since[dkey] >= at:
            return False
        state.since[dkey] = at
        state.live.pop(dkey, None)
        return True

    def restart(self, reset: Reset, history: History) -> None:
        """Restart the detectors ``reset`` reaches and, when it is older than the horizon,
        fold again what they saw after it."""
        state, config = self.state, self.config
        if reset.key in state.resets:
            return
        state.resets[reset.key] = reset
        touched = {detector_key(reset.stream, reset.segment)}
        for labels, first_at in state.labelsets.values():
            if first_at <= reset.at and self._owns(reset, labels):
                for segment in segments_of(labels, config.dimensions, config.partition):
                    touched.add(detector_key(reset.stream, segment))
        moved = {dkey for dkey in touched if self._restart(dkey, reset.at)}
        if not moved or state.horizon is None or state.horizon <= reset.at:
            # Everything folded so far is at or before the restart: nothing to fold again.
            return
        for outcome in history(reset.at, state.horizon):
            root = segment_key(config.partition_of(outcome.labels))
            end = self._end(root)
            if end is None or outcome.at <= end or not outcome.observes(reset.stream):
                continue
            plan = self._plan(outcome)
            for (_, key), dkey in zip(plan.segments, plan.detectors[reset.stream], strict=True):
                steps = self._step(key, root, reset.stream) if dkey in moved else None
                if steps is not None:
                    step = steps[0] if outcome.is_bad(reset.stream) else steps[1]
                    self._live(dkey, outcome, reset.stream, step)


def _best_of_each(
    ranked: list[tuple[bool, datetime, int, str]],
) -> list[tuple[bool, datetime, int, str]]:
    """The first ``MAX_EXAMPLES`` of each cause, in rank order: an alert then shows a
    retrieval miss beside a stray of generation, not only the newest of one kind."""
    kept: dict[str, int] = {}
    best = []
    for example in ranked:
        if kept.get(example[3], 0) < MAX_EXAMPLES:
            kept[example[3]] = kept.get(example[3], 0) + 1
            best.append(example)
    return best


def _rise(statistic: float, step: float) -> float:
    statistic = max(0.0, statistic + step)
    return 0.0 if statistic <= 1e-12 else statistic
