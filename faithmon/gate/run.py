"""One gate run: judge the cases, check every rule, and the exit status that says how it went.

Exit status: 0 every rule holds; 1 a rule failed; 2 a usage error (the CLI's); 3 the
judge could not score some cases, or ``require_proven`` and the judge configuration is
not proven. 3 wins over 1: with cases missing, the run is incomplete, and a judge's
trouble is never read as low faithfulness (the failures found are still listed).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from ..model import Judge
from .cases import Case
from .checks import CaseResult, RuleResult, check_cases, check_rules
from .judging import judge_cases
from .report import lines
from .results import Baseline
from .rules import Rules

PASSED, FAILED, USAGE, JUDGE_FAILED = 0, 1, 2, 3


@dataclass(frozen=True, slots=True)
class Standing:
    """The judge configuration's standing on its sentinels (``model.standing``'s states, or
    ``unknown`` when no store could tell), and the line that says it."""

    state: str
    line: str

    @property
    def proven(self) -> bool:
        return self.state == "proven"


@dataclass(frozen=True, slots=True)
class Outcome:
    dataset: str
    judge: str
    results: tuple[CaseResult, ...]
    rules: tuple[RuleResult, ...]
    standing: Standing
    require_proven: bool = False

    @property
    def unscored(self) -> list[CaseResult]:
        return [r for r in self.results if not r.judged.scored]

    @property
    def refused_standing(self) -> bool:
        return self.require_proven and not self.standing.proven

    @property
    def status(self) -> int:
        if self.unscored or self.refused_standing:
            return JUDGE_FAILED
        return FAILED if any(not r.passed for r in self.rules) else PASSED

    @property
    def verdict(self) -> str:
        failed = [r.name for r in self.rules if not r.passed]
        status = self.status
        if status == JUDGE_FAILED:
            why = [f"{len(self.unscored)} cases not scored"] if self.unscored else []
            if self.refused_standing:
                why.append(f"the judge configuration is {self.standing.state} (--require-proven)")
            also = f"; rules failing meanwhile: {', '.join(failed)}" if failed else ""
            return f"gate: JUDGE FAILED ({', '.join(why)}){also}"
        if failed:
            return f"gate: FAIL ({len(failed)} of {len(self.rules)} rules: {', '.join(failed)})"
        return f"gate: PASS ({len(self.rules)} rules, {len(self.results)} cases)"

    @property
    def standing_words(self) -> str:
        if self.standing.proven:
            return self.standing.line
        if self.refused_standing:
            return f"{self.standing.line} (refused: --require-proven)"
        return f"{self.standing.line} (not proven: --require-proven would make this exit 3)"

    def lines(self) -> list[str]:
        return lines(
            self.results, self.rules, self.dataset, self.judge, self.standing_words, self.verdict
        )


def run_gate(
    judge: Judge,
    cases: Sequence[Case],
    rules: Rules,
    *,
    dataset: str,
    standing: Standing,
    baseline: Baseline | None = None,
    concurrency: int = 1,
    token_budget: int = 0,
    now: Callable[[], datetime] = lambda: datetime.now(UTC),
) -> Outcome:
    """Judge ``cases`` with ``judge`` and hold them to ``rules`` (and ``baseline``'s scores,
    whose dataset the caller has already checked)."""
    judged = judge_cases(judge, cases, concurrency=concurrency, token_budget=token_budget, now=now)
    before = baseline.scores if baseline is not None else None
    results = check_cases(judged, before, rules.max_drop)
    return Outcome(
        dataset=dataset,
        judge=judge.name,
        results=tuple(results),
        rules=tuple(check_rules(results, rules, before)),
        standing=standing,
        require_proven=rules.require_proven,
    )
