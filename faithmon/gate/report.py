"""The gate's words: the lines it prints and the failure messages of its JUnit file.

Failing cases come first, one line each, with the claims that are not supported, then
every rule with its figure and PASS or FAIL, then the judge's standing and the verdict.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from ..model import Claim
from .checks import CaseResult, RuleResult

QUOTE = 80
"""Characters of a claim or quote shown; the results file keeps them whole."""


def _cut(text: str, size: int = QUOTE) -> str:
    text = " ".join(text.split())
    return text if len(text) <= size else text[: size - 1] + "…"


def claim_words(claim: Claim) -> str:
    """A claim not supported with its verdict, its chunk (0-based, as passed to the
    generator) and the quoted evidence: ``"..." contradicted [chunk 0: "..."]``."""
    where = "no chunk" if claim.chunk is None else f"chunk {claim.chunk}"
    quote = f': "{_cut(claim.quote, 60)}"' if claim.quote and claim.chunk is not None else ""
    critical = " critical" if claim.critical else ""
    missing = f", missing: {_cut(claim.missing, 60)}" if claim.missing else ""
    return f'"{_cut(claim.text)}" {claim.verdict}{critical} [{where}{quote}]{missing}'


def claims_words(claims: Sequence[Claim]) -> str:
    return "; ".join(claim_words(c) for c in claims)


def score_words(result: CaseResult) -> str:
    score = result.score
    return "no claims" if score is None else f"score {score:.2f}"


def case_line(result: CaseResult) -> str:
    """``FAIL case ID: score 0.50; below its minimum 0.9; not supported: ...``."""
    parts = [score_words(result), *(f.text for f in result.failures)]
    if result.not_supported:
        parts.append(f"not supported: {claims_words(result.not_supported)}")
    return f"FAIL case {result.id}: " + "; ".join(parts)


def unscored_line(result: CaseResult) -> str:
    return f"ERROR case {result.id}: not scored: {result.judged.judgement.error}"


def causes(unscored: Sequence[CaseResult]) -> str:
    """``2 × HTTP 401: bad key; 1 × timeout``: each cause with its count, most first."""
    counted = Counter(r.judged.judgement.error or "unknown" for r in unscored)
    return "; ".join(f"{n} × {cause}" for cause, n in counted.most_common())


def rule_line(rule: RuleResult) -> str:
    return f"{'PASS' if rule.passed else 'FAIL'} {rule.name}: {rule.figure}"


def lines(
    results: Sequence[CaseResult],
    rules: Sequence[RuleResult],
    dataset: str,
    judge: str,
    standing: str,
    verdict: str,
) -> list[str]:
    """Everything the gate prints, in order."""
    out = [case_line(r) for r in results if r.judged.scored and r.failures]
    unscored = [r for r in results if not r.judged.scored]
    out.extend(unscored_line(r) for r in unscored)
    out.extend(rule_line(rule) for rule in rules)
    out.append(f"dataset {dataset}: {len(results)} cases; judge {judge}")
    out.append(f"judge standing: {standing}")
    if unscored:
        out.append(
            f"{len(unscored)} of {len(results)} cases could not be scored by the judge "
            f"({causes(unscored)}): a judge failure, not low faithfulness"
        )
    out.append(verdict)
    return out
