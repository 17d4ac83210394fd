"""Tail sampling on whole records: filters, keep-always rules, per-segment floors and caps.

Order of decision for one record:

1. **Filters**: outside ``include`` or inside ``exclude`` → ``filtered``.
2. **Keep-always rules** → ``rule:<name>``: ``app`` (the app called ``keep()``),
   ``empty_retrieval``, ``error`` (a span ended in error), ``negative_feedback``
   (a feedback label in the negative set), ``low_retrieval_score`` (the best
   chunk scored below the threshold).
3. **Segment minimum**: a segment with fewer kept records this hour than the
   minimum keeps this one → ``rule:minimum``, so quiet segments stay visible.
4. **Ratio**, by trace id → ``sampled_out`` when out. Without a tracestate
   threshold the rule is OpenTelemetry's TraceIdRatioBased (low 64 bits of the
   trace id), so a trace an app sampled at rate r is kept here at rate r; with
   ``ot=th:`` (consistent probability sampling) it is the threshold rule on the
   trace's 56 bits of randomness (``rv:`` when given), so faithmon agrees with
   samplers upstream.
5. **Segment rate limit**: a token bucket per segment → ``rate_limited``.

The state (buckets, hourly counts) is per process: with several receivers each
applies the limits to its own share of the traffic. It is bounded (``lru.py``): past
``MAX_SEGMENTS`` a new segment takes the place of one whose state is spent (a bucket
full again, a past hour's count), or else shares the ``other`` segment's, so a flood of
new label values is limited as one segment.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

from ..model import Decision, RagRecord, segment_key
from .lru import OTHER_KEY, Lru

_LOW_64 = (1 << 64) - 1
_LOW_56 = (1 << 56) - 1
_TH = re.compile(r"(?:^|;)th:([0-9a-f]{1,14})(?:;|$)")
_RV = re.compile(r"(?:^|;)rv:([0-9a-f]{14})(?:;|$)")
KEEP_RULES = ("app", "empty_retrieval", "error", "negative_feedback", "low_retrieval_score")


def ratio_keeps(trace_id: str, rate: float, trace_state: str = "") -> bool:
    """The deterministic ratio decision for one trace (see the module docstring)."""
    if rate >= 1.0:
        return True
    if rate <= 0.0:
        return False
    ot = _ot_value(trace_state)
    if ot is not None and _TH.search(ot):
        rv = _RV.search(ot)
        randomness = int(rv.group(1), 16) if rv else int(trace_id, 16) & _LOW_56
        threshold = round((1.0 - rate) * (1 << 56))
        return randomness >= threshold
    return (int(trace_id, 16) & _LOW_64) < round(rate * (1 << 64))


def _ot_value(trace_state: str) -> str | None:
    for member in trace_state.split(","):
        key, _, value = member.strip().partition("=")
        if key == "ot":
            return value
    return None


@dataclass(frozen=True, slots=True)
class SamplingPolicy:
    rate: float = 1.0
    segment_by: tuple[str, ...] = ("service", "route")
    rate_limit: float = 0.0
    """Records per second per segment; 0 means no limit."""
    minimum_per_hour: int = 0
    keep_rules: frozenset[str] = frozenset(KEEP_RULES)
    low_score: float | None = None
    negative_feedback: frozenset[str] = frozenset({"thumbs_down", "down", "negative", "bad"})
    include: tuple[tuple[str, str], ...] = ()
    exclude: tuple[tuple[str, str], ...] = ()

    def __post_init__(self) -> None:
        if not 0.0 <= self.rate <= 1.0:
            raise ValueError("rate must be between 0.0 and 1.0")
        unknown = set(self.keep_rules) - set(KEEP_RULES)
        if unknown:
            raise ValueError(f"unknown keep rules: {', '.join(sorted(unknown))}")


@dataclass(slots=True)
class _Bucket:
    tokens: float
    updated: float


def _matches(labels: Mapping[str, str], pairs: Sequence[tuple[str, str]]) -> bool:
    return any(labels.get(name) == value for name, value in pairs)


class PolicySampler:
    """Applies a SamplingPolicy; see the module docstring for the order of rules."""

    def __init__(self, policy: SamplingPolicy, clock: Callable[[], float] = time.monotonic):
        self.policy = policy
        self._clock = clock
        self._buckets: Lru[str, _Bucket] = Lru("the sampler's rate buckets")
        # Kept records per segment and hour, for the minimum (counted only when set).
        self._kept: Lru[tuple[str, datetime], int] = Lru("the sampler's hourly counts")

    def segment_of(self, record: RagRecord) -> dict[str, str]:
        return {k: record.labels[k] for k in self.policy.segment_by if record.labels.get(k)}

    def _rule(self, record: RagRecord) -> str | None:
        rules = self.policy.keep_rules
        if "app" in rules and record.keep:
            return "app"
        if "empty_retrieval" in rules and not record.chunks:
            return "empty_retrieval"
        if "error" in rules and record.error:
            return "error"
        feedback = record.labels.get("feedback", "").lower()
        if "negative_feedback" in rules and feedback in self.policy.negative_feedback:
            return "negative_feedback"
        if "low_retrieval_score" in rules and self.policy.low_score is not None:
            scores = [c.score for c in record.chunks if c.score is not None]
            if scores and max(scores) < self.policy.low_score:
                return "low_retrieval_score"
        return None

    def _take(self, key: str) -> bool:
        limit = self.policy.rate_limit
        if limit <= 0:
            return True
        now = self._clock()
        burst = max(1.0, limit)

        def refilled(_: str, old: _Bucket) -> bool:  # as good as new: dropping it is free
            return old.tokens + (now - old.updated) * limit >= burst

        key = self._buckets.room_for(key, OTHER_KEY, refilled)
        bucket = self._buckets.get(key)
        if bucket is None:
            bucket = _Bucket(tokens=burst, updated=now)
            self._buckets.put(key, bucket)
        bucket.tokens = min(burst, bucket.tokens + (now - bucket.updated) * limit)
        bucket.updated = now
        if bucket.tokens < 1.0:
            return False
        bucket.tokens -= 1.0
        return True

    def _counted(self, key: str, started_at: datetime) -> tuple[str, datetime]:
        """Where the segment's kept records of this hour are counted."""
        hour = started_at.replace(minute=0, second=0, microsecond=0)
        # Only this hour's count decides the minimum: another hour's is spent.
        return self._kept.room_for((key, hour), (OTHER_KEY, hour), lambda k, _: k[1] != hour)

    def keep(self, record: RagRecord) -> Decision:
        policy = self.policy
        segment = self.segment_of(record)
        key = segment_key(segment)
        if (policy.include and not _matches(record.labels, policy.include)) or (
            policy.exclude and _matches(record.labels, policy.exclude)
        ):
            return Decision(False, "filtered", segment)
        counted = None
        if policy.minimum_per_hour > 0:
            counted = self._counted(key, record.started_at)
        rule = self._rule(record)
        below = counted is not None and (self._kept.get(counted) or 0) < policy.minimum_per_hour
        if rule is None and below:
            rule = "minimum"
        if rule is None:
            if not ratio_keeps(record.trace_id, policy.rate, record.trace_state):
                return Decision(False, "sampled_out", segment)
            if not self._take(key):
                return Decision(False, "rate_limited", segment)
        if counted is not None:
            self._kept.put(counted, (self._kept.get(counted) or 0) + 1)
        return Decision(True, "sampled" if rule is None else f"rule:{rule}", segment)


class KeepAll:
    def keep(self, record: RagRecord) -> Decision:
        return Decision(True, "sampled")
