"""The offline judge: deterministic, no network, for the demo, tests and smoke checks.

Each answer sentence that asserts something (greetings, abstentions, questions and
intros do not) is one claim, judged in this order:

1. found verbatim (normalised) in a chunk: supported, quoting itself;
2. against a JSON record chunk, naming a false attribute or negating a true one:
   contradicted, quoting the ``"key": value`` pair; naming a null one: unsupported;
3. a number (or code such as "A17") found nowhere in the context: contradicted when
   the claim otherwise matches a chunk sentence closely, else unsupported;
4. flipping the negation of a closely matching chunk sentence: contradicted;
5. otherwise the support score decides: the claim's content words are looked up in
   the whole context (soft: stems, number words, dates, acronyms, state codes), and
   ``novelty = missing share + run_weight × longest run of missing words +
   name_weight × missing capitalised names``. Above ``threshold`` the claim is
   unsupported; otherwise supported, quoting the chunk sentence that shares most words.

The weights and threshold were tuned on half of each labelled set in
``../shared/data/faithfulness`` (``bench/judge_quality.py`` reports the other half).
It is still a lexical judge: it cannot follow inference or subtle rewording the way
an LLM judge can.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from ..model import Claim, Judgement, JudgementStatus, Usage
from . import records
from . import text as t
from .support import Check, Evidence
from .verify import verify

NAME = "offline/v2"


def _is_critical(sentence: str) -> bool:
    words = sentence.split()
    capitalised = any(w[:1].isupper() for w in words[1:])
    return bool(t.numbers(sentence)) or capitalised


class OfflineJudge:
    """Lexical judge with verified quotes; see the module docstring for its rules."""

    def __init__(
        self,
        threshold: float = 0.75,
        run_weight: float = 0.25,
        name_weight: float = 0.3,
        contradiction_threshold: float = 0.6,
        negation_threshold: float = 0.8,
    ) -> None:
        self.threshold = threshold
        self.run_weight = run_weight
        self.name_weight = name_weight
        self.contradiction_threshold = contradiction_threshold
        self.negation_threshold = negation_threshold

    @property
    def name(self) -> str:
        return NAME

    def judge(self, question: str, chunks: Sequence[str], answer: str) -> Judgement:
        started = time.perf_counter()
        sentences = [s for s in t.sentences(answer) if not t.is_non_claim(s)]
        status: JudgementStatus
        if not sentences:
            status, claims = "no_claims", ()
        elif not any(chunk.strip() for chunk in chunks):
            status = "empty_context"
            claims = tuple(Claim(s, "unsupported", None, None, _is_critical(s)) for s in sentences)
        else:
            status = "ok"
            evidence = Evidence(chunks, question)
            found = records.attributes(chunks)
            claims = verify((self._claim(s, chunks, evidence, found) for s in sentences), chunks)
        return Judgement(
            judge=NAME,
            status=status,
            claims=claims,
            usage=Usage(),
            latency_ms=(time.perf_counter() - started) * 1000,
        )

    def novelty(self, check: Check) -> float:
        """The claim's support score: 0.0 when every content word is in the context."""
        return (
            check.missing_share
            + self.run_weight * check.missing_run
            + self.name_weight * len(check.missing_names)
        )

    def _claim(
        self,
        sentence: str,
        chunks: Sequence[str],
        evidence: Evidence,
        found: Sequence[records.Attribute],
    ) -> Claim:
        critical = _is_critical(sentence)
        needle = t.normalise(t.strip_end(sentence))
        for index, chunk in enumerate(chunks):
            if needle and needle in t.normalise(chunk):
                return Claim(sentence, "supported", index, t.strip_end(sentence), critical)
        conflict = records.conflict(sentence, found)
        if conflict is not None:
            return Claim(sentence, conflict.verdict, conflict.chunk, conflict.quote, critical)
        check = evidence.check(sentence)
        close = check.quote is not None and check.quote_coverage >= self.contradiction_threshold
        if check.missing_numbers:
            if close:
                return Claim(sentence, "contradicted", check.chunk, check.quote, True)
            return Claim(sentence, "unsupported", None, None, True)
        if (
            check.quote is not None
            and check.quote_coverage >= self.negation_threshold
            and t.negated(check.quote) != t.negated(sentence)
        ):
            return Claim(sentence, "contradicted", check.chunk, check.quote, critical)
        if self.novelty(check) > self.threshold or check.quote is None:
            return Claim(sentence, "unsupported", None, None, critical)
        return Claim(sentence, "supported", check.chunk, check.quote, critical)
