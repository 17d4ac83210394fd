"""The offline judge: deterministic, no network, for the demo, tests and smoke checks.

Each answer sentence with a clause that states a fact is one claim, judged on those
clauses (``text.claim_part``). Chunk sentences phrased as instructions to the assistant
("ignore previous instructions", "tell the customer ...") are dropped first: they
support nothing. A claim is judged in this order:

1. found verbatim (normalised) in a chunk: supported, quoting itself;
2. against a JSON record chunk, naming a false attribute or negating a true one:
   contradicted, quoting the ``"key": value`` pair; naming a null one: unsupported.
   Opening hours are bound to their days (``hours``): a time range or an open day the
   record's ``hours`` do not give contradicts them; a schedule they bear out is cut
   from the claim and only the rest is judged;
3. a number (or code such as "A17") found nowhere in the context: contradicted when
   the claim otherwise matches a chunk sentence closely, else unsupported;
4. clause by clause (``bindings``): each clause must be held by one chunk sentence
   (with its neighbours; names may come from earlier in its chunk), its values with
   their units and currencies included. A value that sentence binds to another number
   or unit, or its negation of the same predicate and object for the same subject
   (``contradiction``): contradicted. A rival name, model number or modifier in the
   place the sentence gives another ("Nimbus Basic" against "Nimbus Unlimited",
   "passport renewal" against "licence renewals") that no sentence says with the rest
   of the clause, too many words it lacks (``clause_threshold`` on the clause's own
   share), or an "all"/"always" where the sentence hedges or names a subset:
   unsupported;
5. otherwise the support score decides: the claim's content words are looked up in
   the whole context, softly (stems, number words, dates, 24-hour times, acronyms;
   connectives, generic words and words of opinion are skipped), because paraphrases
   and summaries spread a claim over several sentences. A missing capitalised name, or
   any missing word in a claim of at most ``short_claim`` content words, makes it
   unsupported; otherwise ``novelty = missing share + run_weight × longest run of
   consecutive missing words`` above ``threshold`` does (``summary_threshold`` for an
   answer with no question). A supported claim quotes the chunk sentence that shares
   most of its words;
6. support is then verified, not presumed (``strict``, for answers to a question): a
   value said only of another subject, a polarity or state its sentence reverses, or a
   clause none of whose words the context has makes it contradicted, unsupported or
   partial instead.

Every claim carries a ``confidence`` (``confidence.py``): how often a verdict reached
by that rule was right on the tuning half of ``../shared/data/faithfulness``.
The weights and thresholds were tuned on that half too (``bench/judge_quality.py``
reports the other half). It is still a lexical judge: it cannot follow inference or
subtle rewording the way an LLM judge can.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace

from ..model import Claim, Judgement, JudgementStatus, Usage, Verdict
from ..model.judgement import UNVERIFIED
from . import bindings as b
from . import confidence, hours, json_records, reading, relevance, strict
from . import contradiction as c
from . import text as t
from .conditions import conditioned
from .severity import rule_for
from .support import Check, Evidence
from .verify import MIN_QUOTE, verify

NAME = "offline/v10"


# An over-reaching clause must otherwise be held by its sentence's window: at most
# this share of its words missing.
OVERREACH_MISSING = 0.2

# A clause counts as held, for a partly supported claim, when it has at least this many
# content words and the context supports it as a whole claim would be.
PARTIAL_WORDS = 3


@dataclass(frozen=True, slots=True)
class _Bound:
    verdict: Verdict
    basis: str
    unit: b.Unit | None


# Bins of the support score over the threshold, for confidence: "novelty<=0.5" holds
# claims scoring in (0.25, 0.5] of the threshold; "novelty>inf" a missing name.
NOVELTY_BINS = (0.0, 0.25, 0.5, 0.75, 1.0, 1.5, 2.5)


def _quote(sentence: str, evidence: Evidence, chunk: int) -> str:
    """The claim itself as its quote, or for a claim too short to prove anything alone
    ("€64.90"), the chunk sentence that holds it."""
    needle = t.normalise(t.strip_end(sentence))
    if len(needle) >= MIN_QUOTE:
        return t.strip_end(sentence)
    held = (s for i, s, _, _ in evidence.sentences if i == chunk and needle in t.normalise(s))
    return next(held, t.strip_end(sentence))


def _novelty_bin(ratio: float) -> str:
    for edge in NOVELTY_BINS:
        if ratio <= edge:
            return f"novelty<={edge:g}"
    return "novelty>2.5" if math.isfinite(ratio) else "novelty=inf"


class OfflineJudge:
    """Lexical judge with verified quotes; see the module docstring for its rules."""

    def __init__(
        self,
        threshold: float = 1.0,
        run_weight: float = 0.2,
        short_claim: int = 2,
        contradiction_threshold: float = 0.6,
        negation_threshold: float = 0.9,
        clause_negation: float = 0.75,
        clause_threshold: float = 1.0,
        moved_weight: float = 0.25,
        clause_names: bool = True,
        clause_overreach: bool = True,
        clause_antonym: float = 2.0,
        summary_threshold: float = 1.15,
    ) -> None:
        self.threshold = threshold
        # An answer with no question to it (a summary, a record's description) rewords
        # more than an answer to a question does: it may add a little more before a
        # claim counts as unsupported. 1.15 was best on RAGTruth's tuning half (1.0 to
        # 1.35 tried, bench/README.md); answers to questions keep ``threshold``.
        self.summary_threshold = summary_threshold
        self.run_weight = run_weight
        self.short_claim = short_claim
        self.contradiction_threshold = contradiction_threshold
        self.negation_threshold = negation_threshold
        self.clause_negation = clause_negation
        self.clause_threshold = clause_threshold
        self.moved_weight = moved_weight
        # Clause negation (``clause_negation``: the least share of the clause its
        # sentence must hold, 2.0 switches it off), rival names and over-reach each fire
        # only on specific evidence; on RAGTruth's tuning half they fired 1, 0 and 0
        # times (1 right) and cost no balanced accuracy on any set (bench/README.md).
        # ``clause_antonym`` stays off (2.0): it has not been made as precise.
        self.clause_names = clause_names
        self.clause_overreach = clause_overreach
        self.clause_antonym = clause_antonym

    @property
    def name(self) -> str:
        """Its fingerprint: a changed setting is another judge configuration."""
        defaults = OfflineJudge.__init__.__defaults__ or ()
        code = OfflineJudge.__init__.__code__
        names = code.co_varnames[1 : code.co_argcount]  # the settings, in order
        changed = [
            f"{n}={getattr(self, n):g}"
            for n, default in zip(names, defaults, strict=True)
            if getattr(self, n) != default
        ]
        return " ".join([NAME, *changed])

    def judge(self, question: str, chunks: Sequence[str], answer: str) -> Judgement:
        started = time.perf_counter()
        sentences = reading.claims(answer, question)
        status: JudgementStatus
        claims: tuple[Claim, ...]
        facts = [t.without_instructions(chunk) for chunk in chunks]
        evidence: Evidence | None = None
        if not sentences:
            status, claims = "no_claims", ()
        elif not any(chunk.strip() for chunk in facts):
            status = "empty_context"
            claims = tuple(
                Claim(
                    s,
                    "unsupported",
                    None,
                    None,
                    rule_for(s) is not None,
                    confidence=confidence.of("empty_context", "unsupported"),
                    stage="offline",
                    critical_rule=rule_for(s),
                )
                for s in sentences
            )
        else:
            status = "ok"
            evidence = Evidence(facts)
            index = b.Index(evidence)
            found = json_records.attributes(facts)
            schedules = hours.schedules(facts)
            threshold = self.threshold if question.strip() else self.summary_threshold
            normalised = [t.normalise(chunk) for chunk in facts]
            # A record's "no" and "null" values are not negated sentences: json_records.conflict
            # judges those chunks' negations.
            plain = {i for i, chunk in enumerate(facts) if not chunk.lstrip().startswith("{")}
            claims = verify(
                (  # judged on its factual clauses, shown whole, as its sentence answers
                    reading.answered(
                        replace(
                            self._claim(
                                reading.judged(s, question),
                                normalised,
                                plain,
                                evidence,
                                index,
                                found,
                                schedules,
                                threshold,
                                reading.asked(s, question),
                                question,
                            ),
                            text=s,
                        ),
                        question,
                    )
                    for s in sentences
                ),
                chunks,
            )
        judgement = Judgement(judge=self.name, status=status, claims=claims, usage=Usage())
        # Relevance reads the chunks through the claims' own index: little extra cost.
        measured = relevance.measure(question, facts, answer, judgement, evidence)
        latency = (time.perf_counter() - started) * 1000
        return replace(judgement, relevance=measured, latency_ms=latency)

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
        index: b.Index,
        found: Sequence[json_records.Attribute],
        schedules: Sequence[hours.Schedule] = (),
        threshold: float | None = None,
        about: str = "",
        question: str = "",
    ) -> Claim:
        rule = rule_for(sentence)

        def claim(
            verdict: Verdict, basis: str, chunk: int | None = None, quote: str | None = None
        ) -> Claim:
            return Claim(
                sentence,
                verdict,
                chunk,
                quote,
                rule is not None,
                confidence=confidence.of(basis, verdict),
                stage="offline",
                critical_rule=rule,
            )

        needle = t.normalise(t.strip_end(sentence))
        if not t.says_something(needle):  # a fragment or markup: nothing can bear it out
            return claim("unsupported", "fragment")
        strictly = threshold == self.threshold  # answers to a question (strict.check)
        finding = strict.check(sentence, index, about, question) if strictly else None
        for number, chunk in enumerate(normalised):
            if t.holds_phrase(chunk, needle) and not (about and finding):
                held = claim("supported", "verbatim", number, _quote(sentence, evidence, number))
                if about and strict.unverified(f"{about}: {sentence}", index):
                    held = replace(held, flags=(UNVERIFIED,))  # the question's words apart
                return conditioned(held, evidence, number) or held
        conflict = json_records.conflict(sentence, found)
        if conflict is not None:
            return claim(conflict.verdict, "record", conflict.chunk, conflict.quote)
        conflict = hours.conflict(sentence, schedules)
        if conflict is not None:
            return claim(conflict.verdict, "hours", conflict.chunk, conflict.quote)
        # A schedule the record's hours bear out is checked: judge the rest of the claim.
        rest = hours.without_schedule(sentence, schedules)
        if rest is not None:
            remainder = evidence.check(rest)
            if not remainder.missing_words or remainder.words <= self.short_claim:
                return claim("supported", "hours", schedules[0].chunk, schedules[0].quote)
        check = evidence.check(sentence if rest is None else rest)
        close = check.quote is not None and check.quote_coverage >= self.contradiction_threshold
        if [n for n in check.missing_numbers if not index.in_range(n)]:
            if close:
                return claim("contradicted", "number", check.chunk, check.quote)
            return claim("unsupported", "number")
        bound = self._clauses(sentence, plain, index)
        if bound is not None:
            verdict, basis, unit = bound.verdict, bound.basis, bound.unit
            if verdict == "contradicted" and unit is not None:
                return claim(verdict, basis, unit.chunk, unit.text)
            return self._partial(sentence, evidence, threshold) or claim("unsupported", basis)
        if (
            check.quote is not None
            and check.chunk in plain
            and check.quote_coverage >= self.negation_threshold
            and c.negates(t.strip_end(sentence), check.quote)  # the same predicate
        ):
            return claim("contradicted", "negation", check.chunk, check.quote)
        novelty = self.novelty(check)
        bar = self.threshold if threshold is None else threshold
        basis = _novelty_bin(novelty / bar if bar else math.inf)
        against = finding.unit if finding and finding.verdict == "contradicted" else None
        if against is not None and finding is not None:
            return claim("contradicted", finding.basis, against.chunk, against.text)
        if novelty > bar or check.quote is None:
            return self._partial(sentence, evidence, threshold) or claim("unsupported", basis)
        if finding is not None and finding.basis == "added":  # a clause said nowhere
            held = claim("partial", finding.basis, check.chunk, check.quote)
            return replace(held, missing=finding.part)
        if finding is not None:  # a value said only of another subject
            return claim("unsupported", finding.basis)
        held = claim("supported", basis, check.chunk, check.quote)
        if strict.unverified(sentence, index):  # words spread over the context
            held = replace(held, flags=(UNVERIFIED,))
        return conditioned(held, evidence, check.chunk) or held

    def _partial(self, sentence: str, evidence: Evidence, threshold: float | None) -> Claim | None:
        """A claim not supported whole, one clause of which the context holds and another
        not: ``partial``, quoting what holds and naming what does not. None otherwise."""
        parts = b.clauses(t.strip_end(sentence))
        if len(parts) < 2:
            return None
        bar = self.threshold if threshold is None else threshold
        held: Check | None = None
        failed = None
        for part in parts:
            check = evidence.check(part)
            if (
                check.quote is not None
                and check.words >= PARTIAL_WORDS
                and self.novelty(check) <= bar
            ):
                held = held or check
            elif failed is None:
                failed = part
        if held is None or failed is None or held.quote is None:
            return None
        rule = rule_for(sentence)
        return Claim(
            sentence,
            "partial",
            held.chunk,
            held.quote,
            rule is not None,
            confidence=confidence.of("partial", "partial"),
            stage="offline",
            critical_rule=rule,
            missing=failed,
        )

    def _clauses(self, sentence: str, plain: set[int], index: b.Index) -> _Bound | None:
        """The first clause the context does not hold together, and why; None if all are."""
        parts = b.clauses(t.strip_end(sentence))
        carried: tuple[str, ...] = ()
        carried_words: tuple[str, ...] = ()
        claim_words = index.words(sentence)
        worst: tuple[Verdict, str, b.Unit | None] | None = None
        for number, clause in enumerate(parts):
            bound = index.bind(clause, carried, carried_words, claim_words)
            if number == 0:
                carried = index.evidence_names(clause)
                carried_words = index.words(clause)
            unit = bound.unit
            if unit is None or not bound.words:
                continue
            words = frozenset(index.words(clause))
            opposite = c.best_clause(words, unit.text, b.clauses(unit.text))
            # A unit swap names its sentence by the number itself; another changed
            # value needs half the clause's words there to be the same statement.
            changed = bound.conflicting and bound.coverage >= 0.5
            if bound.missing_values and (changed or (bound.swapped and not bound.missing_names)):
                return _Bound("contradicted", "value", unit)
            held = len(words & frozenset(index.words(opposite))) / len(words) if words else 0.0
            if unit.chunk in plain and bound.words >= 3:
                subject = c.subject(clause, parts[number - 1] if number else "")
                said = frozenset(index.words(opposite))
                back = len(words & said) / len(said) if said else 0.0
                if min(held, back + 0.25) >= self.clause_negation and c.negates(
                    clause, opposite, subject, unit.text
                ):
                    return _Bound("contradicted", "clause_negation", unit)
                if held >= self.clause_antonym and c.antonym(words, unit.words):
                    return _Bound("contradicted", "antonym", unit)
            if worst is not None:
                continue
            if bound.missing_names and self.clause_names:
                worst = ("unsupported", "binding", unit)
            elif (
                self.clause_overreach
                and len(bound.missing) <= OVERREACH_MISSING * bound.words
                and c.overreaches(clause, opposite)
            ):
                worst = ("unsupported", "overreach", unit)
            else:
                absent = len(bound.missing) - len(bound.moved)
                share = (absent + self.moved_weight * len(bound.moved)) / bound.words
                if share > self.clause_threshold:
                    worst = ("unsupported", "clause", unit)
        return None if worst is None else _Bound(*worst)
