"""Core types and protocols shared by every part of faithmon (stdlib only)."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, fields
from datetime import datetime
from typing import Any, Literal, Protocol

Verdict = Literal["supported", "contradicted", "unsupported"]
JudgementStatus = Literal["ok", "no_claims", "empty_context", "judge_error"]
AlertState = Literal["pending", "firing", "resolved"]
Stream = Literal["unsupported", "critical"]
"""What drift watches per segment: records with an unsupported claim, or a critical one."""


@dataclass(frozen=True, slots=True)
class Chunk:
    """A retrieved chunk as it was passed to the generator."""

    position: int
    text: str
    id: str | None = None
    score: float | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class RagRecord:
    """One RAG request, assembled from the spans of one trace."""

    trace_id: str
    question: str
    answer: str
    chunks: tuple[Chunk, ...]
    labels: Mapping[str, str]
    started_at: datetime
    sample_reason: str = "sampled"
    retrieved: tuple[Chunk, ...] = ()
    generation: Mapping[str, Any] = field(default_factory=dict)
    keep: str | None = None
    incomplete: str | None = None
    """Why the evidence cannot be trusted whole (cut or dropped chunks); never scored then."""
    convention: str = ""
    """Which tracing conventions the record was read from, e.g. ``openinference``."""
    error: bool = False
    """A span of the trace ended with an error status."""
    trace_state: str = ""
    """The root span's W3C tracestate (``ot=th:...`` carries an upstream sampling threshold)."""
    root_span_id: str = ""
    """16 hex digits; evaluation events are parented to it."""
    late: bool = False
    """Rebuilt after late spans: it replaces the stored record unless that was scored."""
    repairs: tuple[str, ...] = ()
    """What was changed to make the record storable (NUL removed, NaN score nulled, ...)."""


@dataclass(frozen=True, slots=True)
class Feedback:
    """User feedback on an earlier request, sent after it."""

    trace_id: str
    value: str | int | float | bool
    at: datetime


@dataclass(frozen=True, slots=True)
class Decision:
    """A sampler's verdict on one record, with its reason and the segment it counted in.

    Reasons: ``sampled``, ``sampled_out``, ``rate_limited``, ``filtered`` and
    ``rule:<name>`` for keep-always rules.
    """

    keep: bool
    reason: str
    segment: Mapping[str, str] = field(default_factory=dict, compare=False)


@dataclass(frozen=True, slots=True)
class Claim:
    """One claim of an answer and the judge's verdict on it."""

    text: str
    verdict: Verdict
    chunk: int | None = None
    quote: str | None = None
    critical: bool = False
    flags: tuple[str, ...] = ()
    """What the verifier noticed, e.g. ``evidence_mismatch`` (a quote not in its chunk)."""


@dataclass(frozen=True, slots=True)
class Usage:
    calls: int = 0
    """Requests that got a reply."""
    prompt_tokens: int = 0
    completion_tokens: int = 0
    retries: int = 0
    """Requests that failed and were tried again (429, 5xx, timeouts)."""


@dataclass(frozen=True, slots=True)
class Judgement:
    """The judge's verdict on one answer; a failure is a status, never a score."""

    judge: str
    status: JudgementStatus
    claims: tuple[Claim, ...] = ()
    error: str | None = None
    usage: Usage = Usage()
    latency_ms: float = 0.0
    retryable: bool = False
    """For a judge_error: whether trying again later may succeed (429, 5xx, timeouts)."""
    raw: str | None = None
    """For a judge_error: the judge's reply as it came, when there was one."""
    blocks_judge: bool = False
    """For a judge_error: the configuration itself is refused (401, 403, no quota)."""

    @property
    def faithfulness(self) -> float | None:
        """Strict score (supported / claims), as RAGAS; None without claims."""
        if self.status not in ("ok", "empty_context") or not self.claims:
            return None
        supported = sum(c.verdict == "supported" for c in self.claims)
        return supported / len(self.claims)

    @property
    def lenient(self) -> float | None:
        """Lenient score (not contradicted / claims), as DeepEval."""
        if self.status not in ("ok", "empty_context") or not self.claims:
            return None
        kept = sum(c.verdict != "contradicted" for c in self.claims)
        return kept / len(self.claims)

    @property
    def not_supported(self) -> tuple[Claim, ...]:
        """The claims the chunks do not support: unsupported or contradicted."""
        return tuple(c for c in self.claims if c.verdict != "supported")

    @property
    def unsupported(self) -> bool:
        """Scored, with a claim the chunks do not support: the strict score is below 1.

        Said through the score so that SQL, which has the stored score, asks the same.
        """
        score = self.faithfulness
        return score is not None and score < 1

    @property
    def critical_unsupported(self) -> bool:
        """Unsupported, and a claim not supported is critical (a number, date or dosage)."""
        return self.unsupported and any(c.critical for c in self.not_supported)


@dataclass(frozen=True, slots=True)
class Evidence:
    """What an alert shows of an unsupported record: its chunk ids and the claims not supported."""

    chunk_ids: tuple[str, ...]
    claims: tuple[Claim, ...]

    def cited(self, claim: Claim) -> str | None:
        """The id of the chunk ``claim`` cites, if it cites one of these."""
        at = claim.chunk
        return self.chunk_ids[at] if at is not None and 0 <= at < len(self.chunk_ids) else None


@dataclass(frozen=True, slots=True)
class Outcome:
    """One scored record, reduced to what drift detection needs."""

    trace_id: str
    at: datetime
    labels: Mapping[str, str]
    unsupported: bool
    unsupported_claims: tuple[str, ...] = ()
    critical: bool = False
    """An unsupported claim is critical (a number, amount, date or dosage)."""
    weight: float = 1.0
    """Production records this one stands for: the inverse of its sampling rate."""
    sample_reason: str = "sampled"
    """Why the sampler kept the record; its weight depends on it."""
    evidence: Evidence | None = None
    """For an unsupported record: what an alert shows of it."""


MIN_RATE = 0.01
"""The least rate a baseline stands for: after a spotless one, one bad answer is no alarm."""


@dataclass(frozen=True, slots=True)
class Baseline:
    """One segment's records and bad counts over a judge's frozen baseline window."""

    records: int
    unsupported: int
    critical: int = 0
    spread: float = 0.0
    """How much the unsupported rate moved within the window beyond binomial noise (SD)."""
    critical_spread: float = 0.0

    def rate_of(self, stream: Stream) -> float:
        """The Jeffreys estimate (count + 0.5) / (records + 1), at least ``MIN_RATE``."""
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
class FrozenBaselines:
    """A judge configuration's baselines, frozen once over one window of trace time."""

    start: datetime
    end: datetime
    segments: Mapping[str, Baseline]
    """Segment key → its baseline; ``""`` (overall) is always there."""


@dataclass(frozen=True, slots=True)
class Alert:
    """A drift alert; ``segment`` maps label names to values ({} is overall)."""

    rule: str
    segment: Mapping[str, str]
    state: AlertState
    severity: str
    opened_at: datetime
    updated_at: datetime
    resolved_at: datetime | None = None
    details: Mapping[str, Any] = field(default_factory=dict)
    id: int | None = None
    notified_at: datetime | None = None
    """When sinks were last told about it; equal to ``updated_at`` when this change is told."""


@dataclass(frozen=True, slots=True)
class StoredRecord:
    """A record as stored, with its status and every evaluation of it."""

    id: int
    record: RagRecord
    status: str
    evaluations: tuple[Judgement, ...] = ()
    feedback: tuple[Feedback, ...] = ()


@dataclass(frozen=True, slots=True)
class Signal:
    """A detector's reading for one segment, which alerts turn into state."""

    rule: str
    segment: Mapping[str, str]
    level: Literal["ok", "pending", "firing"]
    details: Mapping[str, Any] = field(default_factory=dict)
    severity: str = ""
    """Empty: ``warning`` when pending, ``critical`` when firing."""


@dataclass(frozen=True, slots=True)
class SamplingTally:
    """How many records of one segment met one sampling decision in one hour."""

    hour: datetime
    segment: Mapping[str, str]
    reason: str
    count: int


@dataclass(frozen=True, slots=True)
class DroppedTrace:
    """A trace the sampler dropped for a reason worth looking up later."""

    trace_id: str
    reason: str
    segment: Mapping[str, str]
    at: datetime


SaveFn = Callable[[Sequence[RagRecord]], None]
SaveSamplingFn = Callable[[Sequence[SamplingTally], Sequence[DroppedTrace]], None]
SaveFeedbackFn = Callable[[Sequence[Feedback]], None]


class Judge(Protocol):
    """Decides, claim by claim, whether an answer is supported by its chunks."""

    @property
    def name(self) -> str: ...

    def judge(self, question: str, chunks: Sequence[str], answer: str) -> Judgement: ...


class Sampler(Protocol):
    def keep(self, record: RagRecord) -> Decision: ...


class Scrubber(Protocol):
    def __call__(self, record: RagRecord) -> RagRecord: ...


class AlertSink(Protocol):
    def send(self, alert: Alert) -> None: ...


@dataclass(frozen=True, slots=True)
class SentinelCase:
    """A case of a sentinel set: an answer known to be supported or unsupported."""

    id: str
    question: str
    chunks: tuple[str, ...]
    answer: str
    expected: Literal["supported", "unsupported"]


@dataclass(frozen=True, slots=True)
class SentinelResult:
    """How a judge did on a sentinel set in one run."""

    cases: int
    supported: int
    unsupported: int
    false_flags: int
    """Known-supported cases the judge called unfaithful."""
    misses: int
    """Known-unsupported cases the judge called faithful."""
    judge_errors: int
    score_gap: float
    """Mean score on supported cases minus mean score on unsupported ones."""

    @property
    def judged(self) -> int:
        return self.supported + self.unsupported

    @property
    def errors(self) -> int:
        return self.false_flags + self.misses

    @property
    def accuracy(self) -> float:
        return 1 - self.errors / self.judged if self.judged else 0.0

    @property
    def false_flag_rate(self) -> float:
        return self.false_flags / self.supported if self.supported else 0.0

    @property
    def miss_rate(self) -> float:
        return self.misses / self.unsupported if self.unsupported else 0.0

    def as_json(self) -> dict[str, Any]:
        return {
            **asdict(self),
            "accuracy": round(self.accuracy, 4),
            "false_flag_rate": round(self.false_flag_rate, 4),
            "miss_rate": round(self.miss_rate, 4),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> SentinelResult:
        # as_json adds the derived rates; only the fields come back.
        return cls(**{f.name: data[f.name] for f in fields(cls)})


def segments_of(labels: Mapping[str, str], dimensions: Sequence[str]) -> list[dict[str, str]]:
    """A record's segments: overall ({}) and one per monitored label the record has."""
    return [{}] + [{d: labels[d]} for d in dimensions if labels.get(d)]


def segment_key(segment: Mapping[str, str]) -> str:
    """Canonical text of a segment: ``route=billing,tenant=acme``; '' is overall."""
    return ",".join(f"{k}={segment[k]}" for k in sorted(segment))
