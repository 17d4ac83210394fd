"""What a judge says: claims with verdicts, judgements and the rules on them, the Judge
protocol, sentinel cases and results."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, fields, replace
from typing import Any, Literal, Protocol

Verdict = Literal["supported", "contradicted", "unsupported", "partial"]
"""``partial``: the context supports part of the claim (one of its facts, or its fact
without a qualifier the chunk attaches); strict scores count it as not supported,
lenient ones as not contradicted."""

FULLY_SUPPORTED = 1.0
"""The strict score of an answer every claim of which is supported."""


def claim_supported(verdict: str) -> bool:
    """The claim-level rule: only ``supported`` counts; unsupported, contradicted and
    partial claims are *not supported* (the SQL form: ``store.rules.claim_supported``)."""
    return verdict == "supported"


def answer_unsupported(strict: float | None) -> bool:
    """The answer-level rule: scored, with a claim not supported, so the strict score is
    below 1 (the SQL form: ``store.rules.answer_unsupported``)."""
    return strict is not None and strict < FULLY_SUPPORTED


Citation = Literal["correct", "wrong", "unresolved", "none"]
"""Whether a claim's citation markers point at chunks that support it: ``none`` when
the claim cites nothing, ``unresolved`` when no marker names a chunk the generator was
given."""

Stage = Literal["offline", "llm"]


JudgementStatus = Literal["ok", "no_claims", "empty_context", "judge_error"]

OVERRULED_OFFLINE = "overruled_offline"
"""A claim's flag: the cascade's LLM settled it against the offline judge's lean (the
review queue sends such claims to people)."""
UNVERIFIED = "unverified"
"""A supported claim's flag: the offline judge found its words across the context but
could not bind each part in one place (a paraphrase, a summary). The cascade sends such
a claim to the LLM instead of settling it."""


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
    confidence: float | None = None
    """How likely the verdict is right, calibrated on labelled data; None: not said."""
    stage: Stage | None = None
    """Which judge decided it in a cascade: ``offline`` or ``llm``; None: a single judge."""
    rationale: str | None = None
    """The LLM judge's one-sentence reason for a verdict other than supported (reviewers
    read it); None: not given."""
    critical_rule: str | None = None
    """The severity rule that made the claim critical (``amount``, ``date``, ``misquote``)."""
    missing: str | None = None
    """For ``partial``: the part of the claim the context does not support."""
    citations: tuple[int, ...] = ()
    """The chunk indices (0-based, as passed to the generator) the claim's markers cite."""
    citation: Citation | None = None
    """Whether those chunks alone support the claim; None: citations were not checked."""


@dataclass(frozen=True, slots=True)
class PolicyFinding:
    """A disclosure the answer must never contain, found by a policy rule. It is stored
    with the evaluation and never changes the faithfulness score."""

    rule: str
    text: str
    """What matched, from the (scrubbed) answer, cut to a short excerpt."""


@dataclass(frozen=True, slots=True)
class Usage:
    calls: int = 0
    """Requests that got a reply."""
    prompt_tokens: int = 0
    completion_tokens: int = 0
    retries: int = 0
    """Requests that failed and were tried again (429, 5xx, timeouts)."""


Cause = Literal["retrieval", "generation"]
"""Why an answer is unfaithful: the chunks lacked what the question needs (the answer
filled a gap the retriever left), or they held it and the answer strayed from them."""

Abstention = Literal["correct", "missed"]
"""An answer that declines: rightly (the chunks lack the answer) or not (they hold it)."""


RETRIEVAL_BAR = 0.5
"""Below this context relevance the chunks miss what the question needs: an unfaithful
answer's cause is ``retrieval``, and the record counts as a retrieval miss on the drift
stream that watches retrieval. The midpoint, not tuned: on bench/relevance.py's swaps
matched chunks average 0.80 and another question's chunks 0.02."""


def retrieval_missed(context_relevance: float | None) -> bool:
    """The retrieval rule: measured, and below ``RETRIEVAL_BAR``."""
    return context_relevance is not None and context_relevance < RETRIEVAL_BAR


@dataclass(frozen=True, slots=True)
class Relevance:
    """The RAG triad beside faithfulness, and the cause of an unfaithful answer."""

    context_relevance: float | None = None
    """0-1: how much of what the question asks the chunks passed to the generator bear on."""
    answer_relevance: float | None = None
    """0-1: how much of the answer addresses the question."""
    cause: Cause | None = None
    """For an answer with a claim not supported; None for a faithful one."""
    abstention: Abstention | None = None
    """For an answer that declines to answer; None otherwise."""


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
    unresolved_citations: int = 0
    """Citation markers in the answer that name no chunk the generator was given."""
    policy: tuple[PolicyFinding, ...] = ()
    relevance: Relevance | None = None
    """Context and answer relevance and the failure's cause, when the judge measured them."""

    @property
    def citation_accuracy(self) -> float | None:
        """Correct citations / cited claims; None when no claim cites anything."""
        cited = [c for c in self.claims if c.citation in ("correct", "wrong", "unresolved")]
        if not cited:
            return None
        return sum(c.citation == "correct" for c in cited) / len(cited)

    @property
    def faithfulness(self) -> float | None:
        """Strict score (supported / claims), as RAGAS; None without claims."""
        if self.status not in ("ok", "empty_context") or not self.claims:
            return None
        supported = sum(claim_supported(c.verdict) for c in self.claims)
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
        """The claims the chunks do not support: unsupported, contradicted or partial."""
        return tuple(c for c in self.claims if not claim_supported(c.verdict))

    @property
    def unsupported(self) -> bool:
        """Scored, with a claim the chunks do not support (``answer_unsupported``)."""
        return answer_unsupported(self.faithfulness)

    @property
    def critical_unsupported(self) -> bool:
        """Unsupported, and a claim not supported is critical (a severity rule matched it:
        an amount, date, dosage, identifier...)."""
        return self.unsupported and any(c.critical for c in self.not_supported)

    @classmethod
    def raised(cls, judge: str, exc: BaseException, latency_ms: float) -> Judgement:
        """What a judge that raised gave: a ``judge_error`` with its cause, never a score."""
        return cls(
            judge=judge,
            status="judge_error",
            error=f"{type(exc).__name__}: {exc}",
            latency_ms=latency_ms,
        )

    def with_relevance(self, relevance: Relevance | None) -> Judgement:
        """This judgement with ``relevance``, its cause settled by the verdicts: a faithful
        (or unscored) answer has none, whatever a judge said; an unsupported one a judge
        gave none takes the retrieval rule's from its context relevance, when measured.
        Nothing measured is None."""
        if relevance is not None:
            cause = relevance.cause if self.unsupported else None
            if cause is None and self.unsupported and relevance.context_relevance is not None:
                missed = retrieval_missed(relevance.context_relevance)
                cause = "retrieval" if missed else "generation"
            relevance = replace(relevance, cause=cause)
        if relevance == Relevance():
            relevance = None
        return replace(self, relevance=relevance)


class Judge(Protocol):
    """Decides, claim by claim, whether an answer is supported by its chunks."""

    @property
    def name(self) -> str: ...

    def judge(self, question: str, chunks: Sequence[str], answer: str) -> Judgement: ...


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
