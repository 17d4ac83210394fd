"""Judge drift, simulated: a 50-case sentinel set every 6 hours through a judge right
with probability 0.95 per case, then 0.85; each run scored by ``score_run`` and the
judge's state after it by ``judge_drift`` over the whole history, as the worker does."""

from __future__ import annotations

import random
from dataclasses import dataclass

from drift_streams import SEED

from faithmon.drift.sentinels import JudgeDriftConfig, judge_drift, score_run
from faithmon.model import Claim, Judgement, SentinelCase, SentinelResult

# Judge drift: the sentinel set.
SENTINEL_CASES = 50
ACCURACY = 0.95
ACCURACY_AFTER = 0.85
RUNS_PER_30_DAYS = 120
RUNS_BEFORE_DROP = 4
"""In-control runs (a day) after the baseline run and before the drop."""
RUNS_AFTER_DROP = 40
GOAL_RUNS = 2
GOAL_JUDGE_ALARMS = 1.0
"""False judge-drift alarms per 30 days we accept: each one holds back production alerts."""

CASES = [
    SentinelCase(f"c{i}", "q", ("c",), "a", "supported" if i % 2 == 0 else "unsupported")
    for i in range(SENTINEL_CASES)
]
FAITHFUL_VERDICT = Judgement(judge="bench", status="ok", claims=(Claim("a", "supported"),))
UNFAITHFUL_VERDICT = Judgement(judge="bench", status="ok", claims=(Claim("a", "unsupported"),))


def sentinel_run(rnd: random.Random, accuracy: float) -> SentinelResult:
    """One run of the set: each case judged right with probability ``accuracy``."""
    judgements = [
        FAITHFUL_VERDICT
        if (case.expected == "supported") == (rnd.random() < accuracy)
        else UNFAITHFUL_VERDICT
        for case in CASES
    ]
    return score_run(CASES, judgements)


@dataclass(frozen=True, slots=True)
class JudgeDelay:
    seed: int
    runs: int | None
    """Runs after the drop until ``judge_drift`` says drifting; None: not in 40 runs."""
    early: bool
    """A false alarm in the in-control runs before the drop."""
    baseline_errors: int


def judge_detect_task(seed: int, config: JudgeDriftConfig) -> JudgeDelay:
    rnd = random.Random(f"{SEED}:judge-detect:{seed}")
    runs = [sentinel_run(rnd, ACCURACY)]
    early = False
    for _ in range(RUNS_BEFORE_DROP):
        runs.append(sentinel_run(rnd, ACCURACY))
        early = early or judge_drift(runs, config).drifting
    for n in range(1, RUNS_AFTER_DROP + 1):
        runs.append(sentinel_run(rnd, ACCURACY_AFTER))
        if judge_drift(runs, config).drifting:
            return JudgeDelay(seed, n, early, runs[0].errors)
    return JudgeDelay(seed, None, early, runs[0].errors)


@dataclass(frozen=True, slots=True)
class JudgeControl:
    seed: int
    alarms: int
    baseline_errors: int


def judge_control_task(seed: int, config: JudgeDriftConfig) -> JudgeControl:
    rnd = random.Random(f"{SEED}:judge-control:{seed}")
    runs = [sentinel_run(rnd, ACCURACY)]
    count, drifting = 0, False
    for _ in range(RUNS_PER_30_DAYS):
        runs.append(sentinel_run(rnd, ACCURACY))
        now = judge_drift(runs, config).drifting
        count += now and not drifting
        drifting = now
    return JudgeControl(seed, count, runs[0].errors)
