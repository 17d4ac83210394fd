"""Cheap first: the offline judge settles what it is sure of, the LLM judges the rest.

The first stage (the offline judge) judges every claim of the answer. A claim whose
``confidence`` is at least the bar is settled there (``stage="offline"``), unless it is
supported without every part bound in one place (flagged ``unverified``: a paraphrase
the offline judge cannot verify costs an LLM call, never a presumed support); a claim
with a lower confidence, or none, is uncertain. The uncertain claims' sentences go
to the second stage (the LLM judge) in one request that carries the chunks once and
only those sentences; its claims come back ``stage="llm"``. A trace whose claims are
all settled makes no call. ``usage`` counts the calls made.

Relevance comes from the stage that decides: the first stage's when it settles the
trace; when the LLM is asked, each measure it gave (from the same request) wins and the
first stage's fills the rest, and the cause is then settled by the merged claims (none
for an answer they find faithful).

A failure of the second stage is the trace's ``judge_error`` (retryable and
``blocks_judge`` as the LLM judge says), never a score made of the first stage's
guesses. The cascade's ``name`` names both stages and the bar, so a change of
either is a new judge configuration (a new sentinel run, a new cache key).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import fields, replace
from typing import Protocol, runtime_checkable

from ..model import Claim, Judge, Judgement, Usage, claim_supported
from ..model.judgement import OVERRULED_OFFLINE, UNVERIFIED, Relevance


class ClaimJudge(Judge, Protocol):
    """A judge that can also judge given claim sentences alone (the LLM judge)."""

    def judge_claims(
        self, question: str, chunks: Sequence[str], sentences: Sequence[str]
    ) -> Judgement: ...


@runtime_checkable
class SettlesOffline(Protocol):
    """A judge that can tell, with no call, whether it would need one (the cascade)."""

    def settle_offline(
        self, question: str, chunks: Sequence[str], answer: str
    ) -> Judgement | None: ...


def _add(a: Usage, b: Usage) -> Usage:
    return Usage(
        a.calls + b.calls,
        a.prompt_tokens + b.prompt_tokens,
        a.completion_tokens + b.completion_tokens,
        a.retries + b.retries,
    )


def _relevance(llm: Relevance | None, offline: Relevance | None) -> Relevance | None:
    """Each measure the LLM gave, else the first stage's."""
    if llm is None or offline is None:
        return llm or offline
    given = {f.name: getattr(llm, f.name) for f in fields(Relevance)}
    return replace(offline, **{name: value for name, value in given.items() if value is not None})


def _against(decided: Claim, lean: Claim) -> Claim:
    if decided.verdict == lean.verdict or OVERRULED_OFFLINE in decided.flags:
        return decided
    return replace(decided, flags=(*decided.flags, OVERRULED_OFFLINE))


class CascadeJudge:
    """The offline judge, then the LLM judge for the uncertain claims (module docstring)."""

    def __init__(self, first: Judge, second: ClaimJudge, bar: float) -> None:
        if not 0 < bar <= 1:
            raise ValueError("the cascade's bar must be in (0, 1]")
        self.first = first
        self.second = second
        self.bar = bar
        self._name = f"cascade({first.name}>{second.name},bar={bar:g})"

    @property
    def name(self) -> str:
        """Both stages' names and the bar: a change of any is another configuration."""
        return self._name

    def settled(self, claim: Claim) -> bool:
        """Whether the first stage's claim stands without the LLM: confident (None is
        uncertain), and if supported, with every part bound in one place."""
        if claim_supported(claim.verdict) and UNVERIFIED in claim.flags:
            return False
        return claim.confidence is not None and claim.confidence >= self.bar

    def judge(self, question: str, chunks: Sequence[str], answer: str) -> Judgement:
        started = time.perf_counter()
        first = self.first.judge(question, chunks, answer)
        offline = self._offline(first)
        if first.status != "ok" or all(self.settled(c) for c in first.claims):
            return replace(offline, latency_ms=(time.perf_counter() - started) * 1000)
        uncertain = list(dict.fromkeys(c.text for c in first.claims if not self.settled(c)))
        second = self.second.judge_claims(question, chunks, uncertain)
        usage = _add(first.usage, second.usage)
        latency_ms = (time.perf_counter() - started) * 1000
        if second.status == "judge_error":
            return replace(second, judge=self.name, usage=usage, latency_ms=latency_ms)
        decided: dict[str, list[Claim]] = {}
        for claim in second.claims:
            decided.setdefault(claim.text, []).append(replace(claim, stage="llm"))
        claims: list[Claim] = []
        for claim, stood in zip(first.claims, offline.claims, strict=True):
            if self.settled(claim):
                claims.append(stood)
            else:
                # A sentence the LLM returned nothing for is not judged supported.
                missing = replace(claim, verdict="unsupported", confidence=None, stage="llm")
                # The review queue wants the claims the LLM settled against the first
                # stage's lean: the people who label them measure which stage was right.
                claims.extend(_against(c, claim) for c in decided.get(claim.text) or [missing])
        return Judgement(
            judge=self.name, status="ok", claims=tuple(claims), usage=usage, latency_ms=latency_ms
        ).with_relevance(_relevance(second.relevance, first.relevance))

    def settle_offline(self, question: str, chunks: Sequence[str], answer: str) -> Judgement | None:
        """The judgement when the first stage settles every claim, else None (no call made).

        Used while the LLM stage may not be called (its daily budget is spent): a trace
        with an uncertain claim waits rather than being scored by the first stage alone.
        """
        started = time.perf_counter()
        first = self.first.judge(question, chunks, answer)
        if first.status == "ok" and not all(self.settled(c) for c in first.claims):
            return None
        return replace(self._offline(first), latency_ms=(time.perf_counter() - started) * 1000)

    def _offline(self, first: Judgement) -> Judgement:
        claims = tuple(replace(c, stage="offline") for c in first.claims)
        return replace(first, judge=self.name, claims=claims)
