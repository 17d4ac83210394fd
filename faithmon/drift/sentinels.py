"""Sentinel sets: catching the judge itself drifting (pure functions, no I/O).

A sentinel set is a versioned list of cases whose answer is known to be
supported or unsupported by its chunks. Rerun on a schedule, it measures the
judge: accuracy, the false-flag rate on supported cases (the judge got
stricter) and the miss rate on unsupported ones (it got more lenient). A
binomial CUSUM over runs, against the judge's first run on the set, catches a
slow slide; a single-run tripwire (an exact binomial tail) catches a sudden one.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from importlib import resources

from ..model import Judgement, SentinelCase, SentinelResult

Case = SentinelCase
RunResult = SentinelResult

STARTER = "starter"
"""The set that ships with faithmon and is loaded when a store has none."""


def starter_cases() -> list[Case]:
    text = resources.files("faithmon.sentinel_sets").joinpath("starter.jsonl").read_text("utf-8")
    return parse_cases(text.splitlines())


def parse_cases(lines: Iterable[str]) -> list[Case]:
    """Cases from JSONL (question, chunks|contexts, answer|response, expected); ValueError."""
    cases = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
            if not isinstance(item, dict):
                raise ValueError("expected a JSON object")
            chunks = item.get("chunks", item.get("contexts", item.get("retrieved_contexts")))
            answer = item.get("answer", item.get("response"))
            if "expected" not in item:
                raise ValueError(
                    "the field `expected` (supported or unsupported) is missing: each case "
                    "says what the judge should find"
                )
            expected = item["expected"]
            if expected not in ("supported", "unsupported"):
                raise ValueError("expected must be supported or unsupported")
            if not isinstance(answer, str) or not isinstance(chunks, list):
                raise ValueError("needs an answer string and a list of chunks")
            cases.append(
                Case(
                    id=str(item.get("id", number)),
                    question=str(item.get("question", "")),
                    chunks=tuple(str(c) for c in chunks),
                    answer=answer,
                    expected=expected,
                )
            )
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise ValueError(f"line {number}: {exc}") from None
    if not cases:
        raise ValueError("no cases")
    return cases


def version(cases: Sequence[Case]) -> str:
    """The set's version: a hash of its content, so an edited set is a new version."""
    text = json.dumps([asdict(c) for c in cases], sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def score_run(cases: Sequence[Case], judgements: Sequence[Judgement]) -> RunResult:
    """Compare verdicts with what is known; a judge error is counted apart, not as a miss."""
    supported_scores: list[float] = []
    unsupported_scores: list[float] = []
    false_flags = misses = errors = 0
    for case, judgement in zip(cases, judgements, strict=True):
        score = judgement.faithfulness
        if score is None:
            errors += 1
            continue
        faithful = not judgement.unsupported
        if case.expected == "supported":
            supported_scores.append(score)
            false_flags += not faithful
        else:
            unsupported_scores.append(score)
            misses += faithful

    def mean(values: list[float]) -> float:
        return sum(values) / len(values) if values else 0.0

    return RunResult(
        cases=len(cases),
        supported=len(supported_scores),
        unsupported=len(unsupported_scores),
        false_flags=false_flags,
        misses=misses,
        judge_errors=errors,
        score_gap=round(mean(supported_scores) - mean(unsupported_scores), 4),
    )


@dataclass(frozen=True, slots=True)
class JudgeDriftConfig:
    shift: float = 0.10
    """The CUSUM is tuned for a rise of this much in the error rate."""
    threshold: float = 4.0
    """With ``min_rate`` at 0.05, a 50-case set every 6 h flags 0.95 → 0.85 accuracy
    within a median of 2 runs at about 0.25 false alarms per 30 days (bench/drift.py)."""
    tripwire_alpha: float = 0.001
    side_alpha: float = 0.0005
    """Tripwire on each side alone (false flags on supported cases, misses on
    unsupported ones): a judge that turns stricter while it misses less can keep its
    accuracy and still move every production score."""
    recovery_alpha: float = 0.05
    min_rate: float = 0.05
    """Floor of the baseline error rate. One run of a few dozen cases cannot tell 0%
    from 5% errors, and a lucky spotless baseline made a good judge's ordinary runs
    look like drift: at 0.02 such baselines (1 in 13 for a 0.95 judge on 50 cases)
    raised about 8 false alarms per 30 days."""


@dataclass(frozen=True, slots=True)
class JudgeDrift:
    statistic: float
    drifting: bool
    tripwire: bool
    direction: str
    """``stricter`` (more false flags), ``more lenient`` (more misses) or ``steady``."""


def _binomial_tail(n: int, p: float, at_least: int) -> float:
    return sum(math.comb(n, k) * p**k * (1 - p) ** (n - k) for k in range(at_least, n + 1))


def judge_drift(runs: Sequence[RunResult], config: JudgeDriftConfig) -> JudgeDrift:
    """The judge's state after ``runs`` (oldest first); the first run is the baseline.

    A run raises the alarm when the CUSUM reaches the threshold or the run alone
    trips the wire, on all its errors or on one side. The alarm holds until a run's
    errors are again plausible at the baseline rates (tail probabilities above
    ``recovery_alpha``); then the CUSUM starts afresh.
    """
    baseline = runs[0]

    def rate(errors: int, judged: int) -> float:
        return max(config.min_rate, (errors + 0.5) / (judged + 1))

    q0 = rate(baseline.errors, baseline.judged)
    flag0 = rate(baseline.false_flags, baseline.supported)
    miss0 = rate(baseline.misses, baseline.unsupported)
    q1 = min(q0 + config.shift, 0.99)
    up, down = math.log(q1 / q0), math.log((1 - q1) / (1 - q0))
    statistic = 0.0
    drifting = tripwire = False
    for run in runs[1:]:
        statistic = max(0.0, statistic + run.errors * up + (run.judged - run.errors) * down)
        tail = _binomial_tail(run.judged, q0, run.errors) if run.judged else 1.0
        side = min(
            _binomial_tail(run.supported, flag0, run.false_flags),
            _binomial_tail(run.unsupported, miss0, run.misses),
        )
        tripwire = tail <= config.tripwire_alpha or side <= config.side_alpha
        if drifting:
            if tail > config.recovery_alpha and side > config.recovery_alpha:
                drifting, statistic = False, 0.0
        elif statistic >= config.threshold or tripwire:
            drifting = True
    last = runs[-1]
    stricter = last.false_flag_rate - baseline.false_flag_rate
    lenient = last.miss_rate - baseline.miss_rate
    direction = "more lenient" if lenient > stricter else "stricter"
    return JudgeDrift(round(statistic, 3), drifting, tripwire, direction if drifting else "steady")


def case_json(case: Case) -> dict[str, object]:
    """A case as a line of a set's JSONL (what :func:`parse_cases` reads back)."""
    return {**asdict(case), "chunks": list(case.chunks)}
