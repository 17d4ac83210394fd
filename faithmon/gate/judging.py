"""Judging a gate's cases as production judges records: a bounded number at once, within a
token budget, and a refusal of the judge configuration stops the calls.

A case the judge could not score comes back as a ``judge_error`` judgement with its
cause, never as a score: a timeout, a refusal or a spent budget is the judge's trouble,
not the answer's.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime

from ..judge.jsonl import judge_line
from ..model import Judge, Judgement
from .cases import Case

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Judged:
    case: Case
    judgement: Judgement
    at: datetime
    """When its judgement was made (or the case given up)."""

    @property
    def scored(self) -> bool:
        """Whether the judge gave a verdict (a score, or an answer with no claim)."""
        return self.judgement.status != "judge_error"


def judge_safely(judge: Judge, case: Case) -> Judgement:
    """The case's judgement; a judge that raises is a ``judge_error`` with its cause."""
    started = time.perf_counter()
    try:
        return judge_line(judge, case.question, case.sources, case.response)
    except Exception as exc:
        logger.warning("faithmon: judge %s failed: %s", judge.name, type(exc).__name__)
        return Judgement.raised(judge.name, exc, (time.perf_counter() - started) * 1000)


def judge_cases(
    judge: Judge,
    cases: Sequence[Case],
    *,
    concurrency: int = 1,
    token_budget: int = 0,
    now: Callable[[], datetime] = lambda: datetime.now(UTC),
) -> list[Judged]:
    """Every case judged, ``concurrency`` at a time, in the cases' order.

    Once the judge's tokens reach ``token_budget`` (0: no budget) no further case is
    sent, and once the endpoint refuses the configuration (401, 403, no quota) neither:
    more calls would only be refused again. The cases not sent come back as judge
    errors saying why.
    """
    lock = threading.Lock()
    spent = 0
    refusal: list[str] = []

    def one(case: Case) -> Judged:
        nonlocal spent
        with lock:
            if refusal:
                return _not_sent(judge, case, f"not sent: {refusal[0]}", now())
            if token_budget and spent >= token_budget:
                why = f"not sent: the judge budget is spent ({spent} of {token_budget} tokens)"
                return _not_sent(judge, case, why, now())
        judgement = judge_safely(judge, case)
        with lock:
            spent += judgement.usage.prompt_tokens + judgement.usage.completion_tokens
            if judgement.blocks_judge and not refusal:
                refusal.append(f"the endpoint refused the judge ({judgement.error})")
        return Judged(case, judgement, now())

    with ThreadPoolExecutor(max_workers=max(1, concurrency)) as pool:
        return list(pool.map(one, cases))


def _not_sent(judge: Judge, case: Case, why: str, at: datetime) -> Judged:
    return Judged(case, Judgement(judge=judge.name, status="judge_error", error=why), at)
