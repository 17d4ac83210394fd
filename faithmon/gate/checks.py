"""The gate's rules applied to judged cases (pure functions, no I/O).

Each case is checked on its own (its minimum, ``critical``, ``expected``, and its fall
from the baseline), then the dataset as a whole (mean, percentiles, critical claims, and
the aggregates' fall from the baseline). A score is the strict one (supported / claims).

A case the judge could not score is checked against nothing: it is reported apart, as
the judge's failure. An answer with no claim has no score: the aggregates leave it out,
and a case that asks for a minimum or an expected verdict fails, since there is no
score to hold to the bar (the answer changed into an abstention or a greeting).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ..model import Claim
from .judging import Judged
from .rules import Rules

TOLERANCE = 1e-9
"""Scores are fractions: 0.9 must not fail a minimum of 0.9 by a rounding error."""


@dataclass(frozen=True, slots=True)
class Failure:
    """A rule a case breaks: the rule's name, and how, in words."""

    rule: str
    text: str


MINIMUM, CRITICAL_CASE, EXPECTED, FELL = (
    "case-minimums",
    "critical-cases",
    "expected-verdicts",
    "case-drops",
)
"""The per-case rules, by the name the output and the JUnit file give them."""


@dataclass(frozen=True, slots=True)
class CaseResult:
    judged: Judged
    failures: tuple[Failure, ...] = ()

    @property
    def id(self) -> str:
        return self.judged.case.id

    @property
    def score(self) -> float | None:
        return self.judged.judgement.faithfulness

    @property
    def passed(self) -> bool:
        return self.judged.scored and not self.failures

    @property
    def not_supported(self) -> tuple[Claim, ...]:
        return self.judged.judgement.not_supported


@dataclass(frozen=True, slots=True)
class RuleResult:
    """One rule over the dataset with its figure; ``aggregate``: a JUnit test case of its own
    (the per-case rules are already one test case per case)."""

    name: str
    figure: str
    passed: bool
    aggregate: bool = True


def percentile(values: Sequence[float], at: float) -> float:
    """The ``at``-th percentile (0-100), interpolating linearly between ranks (numpy's
    default method)."""
    ordered = sorted(values)
    rank = (len(ordered) - 1) * at / 100
    low = math.floor(rank)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


def critical_claims(judged: Judged) -> tuple[Claim, ...]:
    """The case's critical claims not supported (every one, for a ``critical`` case)."""
    missing = judged.judgement.not_supported
    return missing if judged.case.critical else tuple(c for c in missing if c.critical)


def _case_failures(
    judged: Judged, baseline: Mapping[str, float | None], max_drop: float | None
) -> tuple[Failure, ...]:
    case, judgement = judged.case, judged.judgement
    score = judgement.faithfulness
    failures: list[Failure] = []
    if case.minimum is not None:
        if score is None:
            failures.append(Failure(MINIMUM, f"no claim to score (minimum {case.minimum:g})"))
        elif score < case.minimum - TOLERANCE:
            failures.append(Failure(MINIMUM, f"below its minimum {case.minimum:g}"))
    if case.critical and judgement.not_supported:
        count = len(judgement.not_supported)
        plural = "s" if count != 1 else ""
        failures.append(
            Failure(CRITICAL_CASE, f"critical case, {count} claim{plural} not supported")
        )
    if case.expected is not None:
        if score is None:
            text = f"expected {case.expected}, the judge found no claim to judge"
            failures.append(Failure(EXPECTED, text))
        elif (case.expected == "faithful") == judgement.unsupported:
            found = "unfaithful" if judgement.unsupported else "faithful"
            failures.append(Failure(EXPECTED, f"expected {case.expected}, judged {found}"))
    before = baseline.get(case.id)
    if max_drop is not None and before is not None:
        if score is None:
            text = f"scored {before:.2f} in the baseline, now no claim to score"
            failures.append(Failure(FELL, text))
        elif score < before - max_drop - TOLERANCE:
            text = f"fell from {before:.2f} in the baseline (max drop {max_drop:g})"
            failures.append(Failure(FELL, text))
    return tuple(failures)


def check_cases(
    judged: Sequence[Judged],
    baseline: Mapping[str, float | None] | None = None,
    max_drop: float | None = None,
) -> list[CaseResult]:
    """Each case against its own rules; ``baseline``: each case id's strict score then."""
    return [
        CaseResult(j, _case_failures(j, baseline or {}, max_drop) if j.scored else ())
        for j in judged
    ]


def _count_rule(name: str, what: str, results: Sequence[CaseResult]) -> RuleResult:
    """A per-case rule summed up: how many of the cases it applies to break it."""
    failing = [r.id for r in results if any(f.rule == name for f in r.failures)]
    named = f": {', '.join(failing[:10])}{' ...' if len(failing) > 10 else ''}" if failing else ""
    return RuleResult(
        name, f"{len(failing)} of {len(results)} {what}{named}", not failing, aggregate=False
    )


def _aggregate(name: str, label: str, value: float | None, minimum: float, over: str) -> RuleResult:
    if value is None:
        return RuleResult(name, f"{label}: no scored case{over}", False)
    passed = value >= minimum - TOLERANCE
    sign = ">=" if passed else "<"
    return RuleResult(name, f"{label} {value:.3f} {sign} {minimum:g}{over}", passed)


def _drop(
    name: str, label: str, now: float | None, before: float | None, max_drop: float
) -> RuleResult:
    if before is None:
        return RuleResult(name, f"{label}: the baseline has no scored case", True)
    if now is None:
        return RuleResult(name, f"{label}: no scored case (baseline {before:.3f})", False)
    drop = before - now
    passed = drop <= max_drop + TOLERANCE
    return RuleResult(
        name,
        f"{label} {now:.3f} vs baseline {before:.3f} (drop {max(drop, 0.0):.3f}, max {max_drop:g})",
        passed,
    )


def check_rules(
    results: Sequence[CaseResult],
    rules: Rules,
    baseline: Mapping[str, float | None] | None = None,
) -> list[RuleResult]:
    """The dataset's rules, in the order the output lists them: the per-case rules summed
    up, then the aggregates. They read the scored cases only."""
    scored = [r for r in results if r.judged.scored]
    scores = [r.score for r in scored if r.score is not None]
    no_claims = len(scored) - len(scores)
    unscored = len(results) - len(scored)
    parts = [f"{len(scores)} scored cases"]
    if no_claims:
        parts.append(f"{no_claims} without claims")
    if unscored:
        parts.append(f"{unscored} not scored by the judge")
    over = f" ({', '.join(parts)})"

    found: list[RuleResult] = []
    cases = [r.judged.case for r in scored]
    per_case = [
        (MINIMUM, "cases with a minimum fall below it", [c.minimum is not None for c in cases]),
        (CRITICAL_CASE, "critical cases have a claim not supported", [c.critical for c in cases]),
        (
            EXPECTED,
            "cases with an expected verdict are judged otherwise",
            [c.expected is not None for c in cases],
        ),
    ]
    if rules.max_drop is not None:
        compared = [(baseline or {}).get(c.id) is not None for c in cases]
        what = f"cases scored in the baseline fell more than {rules.max_drop:g}"
        per_case.append((FELL, what, compared))
    for name, what, applies in per_case:
        subject = [r for r, a in zip(scored, applies, strict=True) if a]
        if subject or name == FELL:
            found.append(_count_rule(name, what, subject))

    mean = sum(scores) / len(scores) if scores else None
    if rules.min_mean is not None:
        found.append(_aggregate("min-mean", "mean strict score", mean, rules.min_mean, over))
    for point in rules.min_percentiles:
        value = percentile(scores, point.at) if scores else None
        label = f"strict score at percentile {point.at:g}"
        found.append(_aggregate(f"min-percentile-{point.at:g}", label, value, point.minimum, over))
    critical = sum(len(critical_claims(r.judged)) for r in scored)
    most = rules.max_critical_unsupported
    figure = f"critical claims not supported: {critical}, max {most}{over}"
    found.append(RuleResult("max-critical-unsupported", figure, critical <= most))
    if rules.max_drop is not None and baseline is not None:
        before = [s for s in baseline.values() if s is not None]
        found.append(
            _drop(
                "baseline-mean",
                "mean strict score",
                mean,
                sum(before) / len(before) if before else None,
                rules.max_drop,
            )
        )
        for point in rules.min_percentiles:
            found.append(
                _drop(
                    f"baseline-percentile-{point.at:g}",
                    f"strict score at percentile {point.at:g}",
                    percentile(scores, point.at) if scores else None,
                    percentile(before, point.at) if before else None,
                    rules.max_drop,
                )
            )
    return found
