"""The offline judge: deterministic, no network, for the demo, tests and smoke checks.

Each answer sentence that asserts something (greetings, abstentions, questions and
intros do not) is one claim, judged in this order:

1. found verbatim (normalised) in a chunk: supported, quoting itself;
2. against a JSON record chunk, naming a false attribute or negating a true one:
   contradicted, quoting the ``"key": value`` pair; naming a null one: unsupported;
3. a number (or code such as "A17") found nowhere in the context: contradicted when
   the claim otherwise matches a chunk sentence closely, else unsupported;
4. flipping the negation of a closely matching chunk sentence: contradicted;
5. otherwise the support score decides. The claim's content words are looked up in
   the whole context, softly (stems, number words, dates, 24-hour times, acronyms,
   state codes; connectives and generic words such as "offers" or "however" are
   skipped), because paraphrases and summaries spread a claim over several sentences.
   A missing capitalised name, or any missing word in a claim of at most
   ``short_claim`` content words, makes it unsupported; otherwise ``novelty = missing
   share + run_weight × longest run of consecutive missing words`` above
   ``threshold`` does. A supported claim quotes the chunk sentence (or, in a long
   record, the stretch between commas) that shares most of its words.

The weights and threshold were tuned on half of each labelled set in
``../shared/data/faithfulness`` (``bench/judge_quality.py`` reports the other half).
It is still a lexical judge: it cannot follow inference or subtle rewording the way
an LLM judge can.
"""

from __future__ import annotations

import math
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
        threshold: float = 1.0,
        run_weight: float = 0.2,
        short_claim: int = 2,
        contradiction_threshold: float = 0.6,
        negation_threshold: float = 0.9,
    ) -> None:
        self.threshold = threshold
        self.run_weight = run_weight
        self.short_claim = short_claim
        self.contradiction_threshold = contradiction_threshold
        self.negation_threshold = negation_threshold

    @property
    def name(self) -> str:
        """Its fingerprint: a changed setting is another judge configuration."""
        defaults = OfflineJudge.__init__.__defaults__ or ()
        names = (
            "threshold",
            "run_weight",
            "short_claim",
            "contradiction_threshold",
            "negation_threshold",
        )
        changed = [
            f"{n}={getattr(self, n):g}"
            for n, default in zip(names, defaults, strict=True)
            if getattr(self, n) != default
        ]
        return " ".join([NAME, *changed])

    def judge(self, question: str, chunks: Sequence[str], answer: str) -> Judgement:
        started = time.perf_counter()
        sentences = [s for s in t.sentences(answer) if not t.is_non_claim(s)]
        status: JudgementStatus
        claims: tuple[Claim, ...]
        if not sentences:
            status, claims = "no_claims", ()
        elif not any(chunk.strip() for chunk in chunks):
            status = "empty_context"
            claims = tuple(Claim(s, "unsupported", None, None, _is_critical(s)) for s in sentences)
        else:
            status = "ok"
            evidence = Evidence(chunks)
            found = records.attributes(chunks)
            normalised = [t.normalise(chunk) for chunk in chunks]
            # A record's "no" and "null" values are not negated sentences: records.conflict
            # judges those chunks' negations.
            plain = {i for i, chunk in enumerate(chunks) if not chunk.lstrip().startswith("{")}
            claims = verify(
                (self._claim(s, normalised, plain, evidence, found) for s in sentences), chunks
            )
        return Judgement(
            judge=NAME,
            status=status,
            claims=claims,
            usage=Usage(),
            latency_ms=(time.perf_counter() - started) * 1000,
        )

    def novelty(self, check: Check) -> float:
        """The claim's support score: 0.0 when every content word is in the context."""
        if check.missing_names or (check.missing_words and check.words <= self.short_claim):
            return math.inf
        return check.missing_share + self.run_weight * check.missing_run

    def _claim(
        self,
        sentence: str,
        normalised: Sequence[str],
        plain: set[int],
        evidence: Evidence,
        found: Sequence[records.Attribute],
    ) -> Claim:
        critical = _is_critical(sentence)
        needle = t.normalise(t.strip_end(sentence))
        for index, chunk in enumerate(normalised):
            if needle and needle in chunk:
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
            and check.chunk in plain
            and check.quote_coverage >= self.negation_threshold
            and t.negated(check.quote) != t.negated(sentence)
        ):
            return Claim(sentence, "contradicted", check.chunk, check.quote, critical)
        if self.novelty(check) > self.threshold or check.quote is None:
            return Claim(sentence, "unsupported", None, None, critical)
        return Claim(sentence, "supported", check.chunk, check.quote, critical)
