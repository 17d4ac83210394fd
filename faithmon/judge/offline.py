"""The offline judge: deterministic, no network, for the demo, tests and smoke checks.

Per answer sentence: a non-claim (greeting, abstention, question) is skipped; a
sentence found verbatim (normalised) in a chunk is supported with that quote;
otherwise content-word and number overlap with each chunk sentence decides.
A sentence that matches a chunk sentence but changes a number or flips a
negation is contradicted. It is a smoke-test judge, not a quality judge: it
cannot see paraphrase or inference the way an LLM judge can.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

from ..model import Claim, Judgement, JudgementStatus, Usage, Verdict
from . import text as t

NAME = "offline/v1"


@dataclass(frozen=True, slots=True)
class _Match:
    chunk: int
    sentence: str
    coverage: float
    missing_numbers: bool
    negation_flip: bool


def _is_critical(sentence: str) -> bool:
    words = sentence.split()
    capitalised = any(w[:1].isupper() for w in words[1:])
    return bool(t.numbers(sentence)) or capitalised


class OfflineJudge:
    """Lexical judge with verified quotes; see the module docstring for its rules."""

    def __init__(self, support_threshold: float = 0.8, contradiction_threshold: float = 0.6):
        self.support_threshold = support_threshold
        self.contradiction_threshold = contradiction_threshold

    @property
    def name(self) -> str:
        return NAME

    def judge(self, question: str, chunks: Sequence[str], answer: str) -> Judgement:
        started = time.perf_counter()
        claims = tuple(
            self._claim(sentence, chunks)
            for sentence in t.sentences(answer)
            if not t.is_non_claim(sentence)
        )
        status: JudgementStatus
        if not claims:
            status = "no_claims"
        elif not any(chunk.strip() for chunk in chunks):
            status = "empty_context"
        else:
            status = "ok"
        return Judgement(
            judge=NAME,
            status=status,
            claims=claims,
            usage=Usage(),
            latency_ms=(time.perf_counter() - started) * 1000,
        )

    def _claim(self, sentence: str, chunks: Sequence[str]) -> Claim:
        critical = _is_critical(sentence)
        needle = t.normalise(t.strip_end(sentence))
        for index, chunk in enumerate(chunks):
            if needle and needle in t.normalise(chunk):
                return Claim(sentence, "supported", index, t.strip_end(sentence), critical)
        best = self._best_match(sentence, chunks)
        if best is None:
            return Claim(sentence, "unsupported", None, None, critical)
        verdict: Verdict
        if best.coverage >= self.contradiction_threshold and (
            best.missing_numbers or best.negation_flip
        ):
            verdict = "contradicted"
        elif best.coverage >= self.support_threshold and not best.missing_numbers:
            verdict = "supported"
        else:
            return Claim(sentence, "unsupported", None, None, critical)
        return Claim(sentence, verdict, best.chunk, best.sentence, critical)

    def _best_match(self, sentence: str, chunks: Sequence[str]) -> _Match | None:
        words = t.content_words(sentence)
        nums = t.numbers(sentence)
        if not words and not nums:
            return None
        best: _Match | None = None
        for index, chunk in enumerate(chunks):
            for candidate in t.sentences(chunk):
                found = t.content_words(candidate)
                coverage = len(words & found) / len(words) if words else 1.0
                match = _Match(
                    chunk=index,
                    sentence=candidate,
                    coverage=coverage,
                    missing_numbers=bool(nums - t.numbers(candidate)),
                    negation_flip=t.negated(candidate) != t.negated(sentence),
                )
                if best is None or (match.coverage, -match.missing_numbers) > (
                    best.coverage,
                    -best.missing_numbers,
                ):
                    best = match
        return best
