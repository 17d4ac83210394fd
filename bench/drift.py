"""Detection bench: how fast the drift and judge-drift detectors fire, and how often falsely.

Run from the repository root::

    python bench/drift.py           # full: about 2 minutes on 2 cores
    python bench/drift.py --quick   # about 15 s
    python bench/drift.py --only sentinel --judge threshold=6 --judge min_rate=0.02

Every stream is simulated from fixed seeds and measured with faithmon's own
functions, the way the worker calls them:

- **Production drift.** Scored records arrive evenly at 200 and at 20 per hour.
  The true faithful rate is 0.92, wobbling by ±0.01 (a sine over a week, random
  phase per seed); the judge flips 3% of verdicts either way. The baseline is
  ``compute_baselines`` over ``Outcome`` s of the first 7 days
  (``DriftConfig`` defaults), the threshold comes from ``thresholds`` with a
  budget of 0.1 false alarms per 30 days for the segment (its two detectors,
  unsupported and critical, get 0.05 each), and ``first_alarm`` runs the CUSUM.
  One day after the baseline the faithful rate drops to 0.85, 0.80 or 0.70:
  figure, the records (and hours) until the alarm. Streams that never change
  run for months, restarting the CUSUM after each alarm: figure, false alarms
  per 30 days, beside what the Markov chain (``run_length``) predicts.
- **Judge drift.** A 50-case sentinel set (25 supported, 25 unsupported) runs
  every 6 hours through a judge that is right with probability 0.95 per case,
  then 0.85. Each run is scored by ``score_run`` and the judge's state after it
  is ``judge_drift`` over the whole history, as the worker calls it. Figures:
  runs until the drop is flagged, and false alarms per 30 days (120 runs).

Goals: 0.92 → 0.80 caught within a median of 300 records at no more than 0.1
false alarms per 30 days per segment (both rates); a judge falling from 0.95 to
0.85 accuracy caught within a median of 2 runs at no more than 1 false alarm per
30 days. The script exits 0 either way.
Results go to ``bench/results/drift.json``.
"""

from __future__ import annotations

import argparse
import json
import math
import multiprocessing
import platform
import random
import statistics
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, fields, replace
from datetime import UTC, datetime, timedelta
from functools import cache
from typing import Any

from common import RESULTS_DIR, cpus, relative

from faithmon import drift
from faithmon.drift.sentinels import JudgeDriftConfig, judge_drift, score_run
from faithmon.model import Claim, Judgement, Outcome, SentinelCase, SentinelResult

RESULTS = RESULTS_DIR / "drift.json"
SEED = 20261201
TAU = 2 * math.pi

# Production drift: the streams.
RATES = (200, 20)
"""Scored records per hour."""
FAITHFUL = 0.92
DROPS = (0.85, 0.80, 0.70)
GOAL_DROP = 0.80
GOAL_RECORDS = 300
FLIP = 0.03
"""Judge noise: the share of verdicts flipped, each way."""
WOBBLE = 0.01
PERIOD_HOURS = 7 * 24
BASELINE_HOURS = 7 * 24
CHANGE_AFTER_HOURS = 24
"""In-control traffic between the end of the baseline and the change point."""
HORIZON_HOURS = 7 * 24
"""How long after the change a stream runs before a miss is called a miss."""
MONTH_HOURS = 30 * 24
SEGMENT_BUDGET = 0.1
"""False alarms per 30 days for the segment, shared by its two detectors."""
CONFIG = drift.DriftConfig(dimensions=(), false_alarms=SEGMENT_BUDGET)
SHARE = SEGMENT_BUDGET / len(drift.STREAMS)
UNSUPPORTED = drift.detector_key("unsupported", {})
WOBBLE_PHASES = 12
T0 = datetime(2026, 1, 5, tzinfo=UTC)

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


@dataclass(frozen=True, slots=True)
class Sizes:
    detect_seeds: int
    """Seeds per rate; each seed gets its own baseline and runs every drop."""
    control: Mapping[int, tuple[int, int]]
    """Rate → (streams, months each) that never change."""
    judge_seeds: int
    judge_months: int
    """Seeds of one month each: the history replay is quadratic in its length."""


FULL = Sizes(200, {200: (100, 12), 20: (200, 10)}, 500, 600)
QUICK = Sizes(20, {200: (8, 5), 20: (20, 10)}, 100, 60)


def unsupported_rate(faithful: float) -> float:
    """The rate the detector sees: the judge's flips move verdicts both ways."""
    return FLIP + (1 - 2 * FLIP) * (1 - faithful)


def verdicts(
    us: Sequence[float], rate: int, phase: float, first_hour: int, level: Callable[[int], float]
) -> list[bool]:
    """Unsupported verdicts of hourly blocks of records, from their uniforms ``us``.

    The wobble changes slowly, so one rate per hour is exact enough and keeps the
    inner loop to a comparison.
    """
    out: list[bool] = []
    for k in range(0, len(us), rate):
        hour = first_hour + k // rate
        wobble = WOBBLE * math.sin(TAU * hour / PERIOD_HOURS + phase)
        p = unsupported_rate(level(hour) + wobble)
        out += [u < p for u in us[k : k + rate]]
    return out


def in_control(_: int) -> float:
    return FAITHFUL


def uniforms(rnd: random.Random, count: int) -> list[float]:
    draw = rnd.random
    return [draw() for _ in range(count)]


@cache
def trace_times(rate: int) -> tuple[datetime, ...]:
    """Record i arrives at (i + ½) / rate hours: evenly, never on the window's edge."""
    return tuple(T0 + timedelta(hours=(i + 0.5) / rate) for i in range(BASELINE_HOURS * rate + 1))


@dataclass(frozen=True, slots=True)
class Detector:
    q0: float
    q1: float
    h: float
    window_end: datetime
    baselines: Mapping[str, drift.Baseline]


def calibrate(flags: Sequence[bool], rate: int) -> tuple[Detector, list[Outcome]]:
    """The worker's baseline and threshold from the first 7 days and one record after them."""
    outcomes = [Outcome("", at, {}, y) for at, y in zip(trace_times(rate), flags, strict=True)]
    window = drift.baseline_window(outcomes, CONFIG)
    if window is None:
        raise RuntimeError("the simulated stream does not cover the baseline window")
    baselines = drift.compute_baselines(outcomes, window[1], CONFIG)
    h, _, _ = drift.thresholds({"": ({}, rate * 24.0)}, baselines, CONFIG)[UNSUPPORTED]
    q0 = baselines[""].rate_of("unsupported")
    q1 = min(q0 + CONFIG.shift_of("unsupported"), 0.99)
    return Detector(q0, q1, h, window[1], baselines), outcomes


def alarms(ys: Sequence[bool], detector: Detector) -> Iterator[int]:
    """Every alarm of the CUSUM, restarted from zero after each one."""
    start = 0
    while True:
        found = drift.first_alarm(ys[start:], detector.q0, detector.q1, detector.h)
        if found is None:
            return
        yield start + found
        start += found + 1


@dataclass(frozen=True, slots=True)
class Delay:
    rate: int
    drop: float
    seed: int
    q0: float
    h: float
    records: int | None
    """Records from the change point to the alarm, both counted; None: none in the horizon."""
    early_alarms: int
    """False alarms between the baseline and the change point."""
    markov: float
    """The exact expected delay from zero: ``run_length(q after the drop, q0, q1, h)``."""


def detect_stream(rate: int, seed: int) -> tuple[float, list[bool], list[float]]:
    """A seed's wobble phase, baseline verdicts and the uniforms of what follows."""
    rnd = random.Random(f"{SEED}:detect:{rate}:{seed}")
    phase = rnd.uniform(0, TAU)
    base = verdicts(uniforms(rnd, BASELINE_HOURS * rate), rate, phase, 0, in_control)
    return phase, base, uniforms(rnd, (CHANGE_AFTER_HOURS + HORIZON_HOURS) * rate)


def changing_to(drop: float) -> Callable[[int], float]:
    def level(hour: int) -> float:
        return FAITHFUL if hour < BASELINE_HOURS + CHANGE_AFTER_HOURS else drop

    return level


def detect_task(rate: int, seed: int) -> list[Delay]:
    phase, base, us = detect_stream(rate, seed)
    # The same uniforms serve every drop, so the drops differ only by the drop.
    streams = {d: verdicts(us, rate, phase, BASELINE_HOURS, changing_to(d)) for d in DROPS}
    detector, _ = calibrate([*base, streams[DROPS[0]][0]], rate)
    change = CHANGE_AFTER_HOURS * rate
    delays = []
    for drop, ys in streams.items():
        early, found = 0, None
        for at in alarms(ys, detector):
            if at >= change:
                found = at - change + 1
                break
            early += 1
        markov = drift.run_length(unsupported_rate(drop), detector.q0, detector.q1, detector.h)
        delays.append(Delay(rate, drop, seed, detector.q0, detector.h, found, early, markov))
    return delays


@dataclass(frozen=True, slots=True)
class Control:
    rate: int
    stream: int
    months: int
    alarms: int
    q0: float
    h: float
    budget: float
    """Markov: alarms per 30 days if the true rate were exactly the estimated q0 (the budget)."""
    baseline_error: float
    """Markov: at the true in-control rate against the estimated q0, without the wobble."""
    wobble: float
    """Markov: the same, averaged over the wobble's phases (alarms are short next to a week)."""


def control_task(rate: int, stream: int, months: int) -> Control:
    rnd = random.Random(f"{SEED}:control:{rate}:{stream}")
    phase = rnd.uniform(0, TAU)
    ys = verdicts(uniforms(rnd, BASELINE_HOURS * rate), rate, phase, 0, in_control)
    # Generated a month at a time: a float per record for months would not fit.
    for month in range(months):
        first = BASELINE_HOURS + month * MONTH_HOURS
        ys += verdicts(uniforms(rnd, MONTH_HOURS * rate), rate, phase, first, in_control)
    cut = BASELINE_HOURS * rate
    detector, _ = calibrate(ys[: cut + 1], rate)
    count = sum(1 for _ in alarms(ys[cut:], detector))
    volume = MONTH_HOURS * rate

    def per_month(q: float) -> float:
        return volume / drift.run_length(q, detector.q0, detector.q1, detector.h)

    wobbled = [
        per_month(unsupported_rate(FAITHFUL + WOBBLE * math.sin(TAU * k / WOBBLE_PHASES)))
        for k in range(WOBBLE_PHASES)
    ]
    return Control(
        rate,
        stream,
        months,
        count,
        detector.q0,
        detector.h,
        per_month(detector.q0),
        per_month(unsupported_rate(FAITHFUL)),
        statistics.fmean(wobbled),
    )


def cross_check(rate: int, seed: int) -> dict[str, Any]:
    """``detect`` over the same outcomes fires at the record ``first_alarm`` found,
    with the threshold it sizes from its own measure of the traffic."""
    phase, base, us = detect_stream(rate, seed)
    ys = verdicts(us, rate, phase, BASELINE_HOURS, changing_to(GOAL_DROP))
    detector, outcomes = calibrate([*base, ys[0]], rate)
    at = next(alarms(ys, detector))
    after = [
        Outcome(f"{i:032x}", T0 + timedelta(hours=(BASELINE_HOURS * rate + i + 0.5) / rate), {}, y)
        for i, y in enumerate(ys[: at + 1])
    ]
    history = outcomes[:-1]

    def reading(count: int) -> drift.Reading:
        readings = drift.detect(
            history + after[:count], detector.baselines, detector.window_end, CONFIG
        )
        return next(r for r in readings if r.stream == "unsupported" and not r.segment)

    firing = reading(at + 1)
    before = reading(at)
    return {
        "rate": rate,
        "seed": seed,
        "alarm_record": at,
        "first_alarm_h": detector.h,
        "detect_h": firing.threshold,
        "detect_per_day": round(firing.per_day, 1),
        "detect_level_at_alarm": firing.level,
        "detect_level_before": before.level,
        "agrees": firing.level == "firing"
        and before.level != "firing"
        and firing.threshold == detector.h,
    }


# Judge drift.

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


# Figures.

Task = tuple[Callable[..., Any], tuple[Any, ...]]


def call(task: Task) -> Any:
    function, args = task
    return function(*args)


def poisson_interval(count: int, level: float = 0.95) -> tuple[float, float]:
    """Exact (Garwood) interval of a Poisson mean from one observed count."""
    tail = (1 - level) / 2

    def cdf(k: int, mu: float) -> float:
        if k < 0:
            return 0.0
        return math.fsum(math.exp(j * math.log(mu) - mu - math.lgamma(j + 1)) for j in range(k + 1))

    def solve(f: Callable[[float], float]) -> float:
        low, high = 1e-9, count + 20 + 10 * math.sqrt(count)
        for _ in range(100):
            middle = (low + high) / 2
            low, high = (middle, high) if f(middle) < 0 else (low, middle)
        return (low + high) / 2

    lower = 0.0 if count == 0 else solve(lambda mu: 1 - cdf(count - 1, mu) - tail)
    upper = solve(lambda mu: tail - cdf(count, mu))
    return lower, upper


def percentile(values: Sequence[float], share: float) -> float:
    """Nearest rank, so a delay is always one that happened (inf: never caught)."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(share * len(ordered)) - 1)]


def summarize_delays(delays: Sequence[Delay]) -> list[dict[str, Any]]:
    cells = []
    for rate in RATES:
        for drop in DROPS:
            mine = [d for d in delays if d.rate == rate and d.drop == drop]
            records = [float(d.records) if d.records is not None else math.inf for d in mine]
            cells.append(
                {
                    "rate": rate,
                    "drop": drop,
                    "q_after": unsupported_rate(drop),
                    "seeds": len(mine),
                    "median": statistics.median(records),
                    "p90": percentile(records, 0.9),
                    "mean": statistics.fmean(records),
                    "markov_mean": statistics.fmean(d.markov for d in mine),
                    "missed": sum(d.records is None for d in mine),
                    "early_alarms": sum(d.early_alarms for d in mine),
                    "h_median": statistics.median(d.h for d in mine),
                    "q0_median": statistics.median(d.q0 for d in mine),
                }
            )
    return cells


def summarize_controls(controls: Sequence[Control]) -> list[dict[str, Any]]:
    cells = []
    for rate in RATES:
        mine = [c for c in controls if c.rate == rate]
        if not mine:
            continue
        months = sum(c.months for c in mine)
        count = sum(c.alarms for c in mine)
        low, high = poisson_interval(count)
        # Each stream's Markov rate weighs as much as the months it ran.
        weighted = {
            key: sum(getattr(c, key) * c.months for c in mine) / months
            for key in ("budget", "baseline_error", "wobble")
        }
        cells.append(
            {
                "rate": rate,
                "streams": len(mine),
                "months": months,
                "alarms": count,
                "per_30_days": count / months,
                "interval": [low / months, high / months],
                "markov": weighted,
                "share": SHARE,
                "q0_sd": statistics.pstdev(c.q0 for c in mine),
                "h_median": statistics.median(c.h for c in mine),
            }
        )
    return cells


def summarize_judge(
    delays: Sequence[JudgeDelay], controls: Sequence[JudgeControl]
) -> dict[str, Any]:
    runs = [float(d.runs) if d.runs is not None else math.inf for d in delays]
    count = sum(c.alarms for c in controls)
    low, high = poisson_interval(count)
    by_baseline: dict[str, list[int]] = {}
    for c in controls:
        key = str(min(c.baseline_errors, 4)) if c.baseline_errors < 4 else "4+"
        by_baseline.setdefault(key, []).append(c.alarms)
    return {
        "seeds": len(delays),
        "median": statistics.median(runs),
        "p90": percentile(runs, 0.9),
        "within_goal": sum(r <= GOAL_RUNS for r in runs) / len(runs),
        "missed": sum(d.runs is None for d in delays),
        "early_alarms": sum(d.early for d in delays),
        "months": len(controls),
        "alarms": count,
        "per_30_days": count / len(controls),
        "interval": [low / len(controls), high / len(controls)],
        "per_30_days_by_baseline_errors": {
            k: {"months": len(v), "per_30_days": statistics.fmean(v)}
            for k, v in sorted(by_baseline.items())
        },
    }


def jsonable(value: Any) -> Any:
    """Infinite delays (never caught) as null: JSON has no infinity."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [jsonable(v) for v in value]
    return value


def table(titles: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    widths = [max(len(t), *(len(r[i]) for r in rows)) for i, t in enumerate(titles)]

    def line(cells: Sequence[str]) -> str:
        return "  ".join(
            c.ljust(w) if i == 0 else c.rjust(w)
            for i, (c, w) in enumerate(zip(cells, widths, strict=True))
        ).rstrip()

    return "\n".join([line(titles), line(["-" * w for w in widths]), *(line(r) for r in rows)])


def records(value: float, rate: int) -> str:
    if math.isinf(value):
        return "missed"
    return f"{value:,.0f} ({value / rate:.1f} h)"


def rate_cell(value: float, interval: Sequence[float]) -> str:
    return f"{value:.3f} [{interval[0]:.3f}, {interval[1]:.3f}]"


def drift_report(
    delays: list[dict[str, Any]], controls: list[dict[str, Any]], seeds: int
) -> tuple[list[str], dict[int, bool]]:
    delay_rows = [
        (
            f"{c['rate']}/h",
            f"{FAITHFUL:.2f} → {c['drop']:.2f}",
            f"{c['q0_median']:.3f} → {c['q_after']:.3f}",
            f"{c['h_median']:.2f}",
            records(c["median"], c["rate"]),
            records(c["p90"], c["rate"]),
            f"{c['mean']:,.0f}",
            f"{c['markov_mean']:,.0f}",
            str(c["missed"]),
        )
        for c in delays
    ]
    control_rows = [
        (
            f"{c['rate']}/h",
            f"{c['streams']} x {c['months'] // c['streams']}",
            str(c["alarms"]),
            rate_cell(c["per_30_days"], c["interval"]),
            f"{c['markov']['budget']:.3f}",
            f"{c['markov']['baseline_error']:.3f}",
            f"{c['markov']['wobble']:.3f}",
            f"{c['h_median']:.2f}",
        )
        for c in controls
    ]
    verdicts: dict[int, bool] = {}
    goal_lines = []
    for rate in RATES:
        cell = next(c for c in delays if c["rate"] == rate and c["drop"] == GOAL_DROP)
        control = next((c for c in controls if c["rate"] == rate), None)
        alarms_ok = control is not None and control["per_30_days"] <= SHARE
        verdicts[rate] = cell["median"] <= GOAL_RECORDS and alarms_ok
        measured = f"{control['per_30_days']:.3f}" if control else "not measured"
        goal_lines.append(
            f"GOAL drift {rate}/h: {FAITHFUL:.2f} → {GOAL_DROP:.2f} median "
            f"{cell['median']:,.0f} records (Markov mean from zero {cell['markov_mean']:,.0f}) "
            f"≤ {GOAL_RECORDS}, false alarms {measured}/30 d ≤ {SHARE:.2f} "
            f"(the unsupported detector's share of {SEGMENT_BUDGET}/segment): "
            f"{'PASS' if verdicts[rate] else 'FAIL'}"
        )
    lines = [
        f"Detection delay after the change ({seeds} seeds per row, a baseline each; "
        "records until the alarm, counting both ends)",
        "",
        table(
            (
                "rate",
                "faithful",
                "q0 → q",
                "h",
                "median",
                "p90",
                "mean",
                "Markov mean",
                "missed",
            ),
            delay_rows,
        ),
        "",
        f"False alarms of the unsupported detector per 30 days, no change "
        f"(budget {SHARE:.2f} = {SEGMENT_BUDGET} per segment / {len(drift.STREAMS)} detectors)",
        "",
        table(
            (
                "rate",
                "streams x months",
                "alarms",
                "per 30 d [95% CI]",
                "Markov budget",
                "+ baseline err",
                "+ wobble",
                "h",
            ),
            control_rows,
        ),
        "",
        f"missed: no alarm within {HORIZON_HOURS} h of the change. "
        f"{sum(c['early_alarms'] for c in delays)} false alarms fell in the "
        f"{CHANGE_AFTER_HOURS} h before a change (the CUSUM restarts; not a detection).",
        "Markov mean: run_length(q, q0, q1, h) per seed, from zero; the simulated CUSUM "
        "has run a day in control when the change comes.",
        "Markov budget: 30-day volume / run_length(q0, q0, q1, h); + baseline err: at the "
        "true rate against the estimated q0; + wobble: that, averaged over the sine's phase.",
        "",
        *goal_lines,
    ]
    return lines, verdicts


def judge_report(summary: dict[str, Any], config: JudgeDriftConfig) -> tuple[list[str], bool]:
    met = summary["median"] <= GOAL_RUNS and summary["per_30_days"] <= GOAL_JUDGE_ALARMS
    by_baseline = ", ".join(
        f"{k}: {v['per_30_days']:.2f}" for k, v in summary["per_30_days_by_baseline_errors"].items()
    )
    row = (
        f"{ACCURACY:.2f} → {ACCURACY_AFTER:.2f}",
        f"{summary['median']:.1f}",
        f"{summary['p90']:.0f}",
        f"{summary['within_goal']:.0%}",
        str(summary["missed"]),
        rate_cell(summary["per_30_days"], summary["interval"]),
        f"{summary['seeds']} / {summary['months']}",
    )
    lines = [
        f"Judge drift: {SENTINEL_CASES}-case sentinel set every 6 h, {config}",
        "",
        table(
            (
                "accuracy",
                "runs median",
                "p90",
                f"≤ {GOAL_RUNS} runs",
                "missed",
                "false alarms / 30 d [95% CI]",
                "seeds / months",
            ),
            [row],
        ),
        f"missed: not flagged within {RUNS_AFTER_DROP} runs (10 days) of the drop; "
        f"false alarms / 30 d by errors in the baseline run: {by_baseline}",
        f"{summary['early_alarms']} seeds had a false alarm in the {RUNS_BEFORE_DROP} runs "
        "before the drop",
        "",
        f"GOAL judge drift: {ACCURACY:.2f} → {ACCURACY_AFTER:.2f} flagged within a median of "
        f"{summary['median']:.1f} runs ≤ {GOAL_RUNS}, false alarms {summary['per_30_days']:.2f}"
        f" / 30 d ≤ {GOAL_JUDGE_ALARMS:g}: {'PASS' if met else 'FAIL'}",
    ]
    return lines, met


def judge_config(pairs: Sequence[str]) -> JudgeDriftConfig:
    """``JudgeDriftConfig()`` with ``field=value`` overrides, to compare settings."""
    names = {f.name for f in fields(JudgeDriftConfig)}
    changes: dict[str, float] = {}
    for pair in pairs:
        name, _, value = pair.partition("=")
        if name not in names:
            raise SystemExit(f"--judge: no field {name!r} in JudgeDriftConfig")
        changes[name] = float(value)
    return replace(JudgeDriftConfig(), **changes)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="fewer seeds and months")
    parser.add_argument("--only", choices=("drift", "sentinel"), help="one half of the bench")
    parser.add_argument(
        "--judge", action="append", default=[], help="JudgeDriftConfig override, field=value"
    )
    parser.add_argument("--processes", type=int, default=min(2, cpus() or 1))
    args = parser.parse_args(argv)
    sizes = QUICK if args.quick else FULL
    mode = "quick" if args.quick else "full"
    config = judge_config(args.judge)

    tasks: list[Task] = []
    if args.only != "sentinel":
        # Longest first, so neither process is left with a long task at the end.
        for rate in RATES:
            streams, months = sizes.control[rate]
            tasks += [(control_task, (rate, s, months)) for s in range(streams)]
        tasks += [(detect_task, (rate, s)) for rate in RATES for s in range(sizes.detect_seeds)]
    if args.only != "drift":
        tasks += [(judge_control_task, (s, config)) for s in range(sizes.judge_months)]
        tasks += [(judge_detect_task, (s, config)) for s in range(sizes.judge_seeds)]

    started = time.perf_counter()
    with multiprocessing.Pool(args.processes) as pool:
        results = list(pool.imap_unordered(call, tasks))
        checks = [] if args.only == "sentinel" else pool.map(call, [(cross_check, (200, 0))])
    elapsed = time.perf_counter() - started

    delays = sorted(
        (d for r in results if isinstance(r, list) for d in r),
        key=lambda d: (-d.rate, -d.drop, d.seed),
    )
    controls = sorted(
        (r for r in results if isinstance(r, Control)), key=lambda c: (-c.rate, c.stream)
    )
    judge_delays = sorted((r for r in results if isinstance(r, JudgeDelay)), key=lambda d: d.seed)
    judge_controls = sorted(
        (r for r in results if isinstance(r, JudgeControl)), key=lambda c: c.seed
    )

    header = (
        f"faithmon drift bench ({mode}): Python {platform.python_version()} on "
        f"{platform.machine()}, {cpus()} CPUs, {args.processes} processes, {elapsed:.0f}s"
    )
    out = [header, ""]
    report: dict[str, Any] = {
        "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "mode": mode,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpus": cpus(),
        "processes": args.processes,
        "seconds": elapsed,
        "seed": SEED,
        "sizes": {**asdict(sizes), "control": {str(k): v for k, v in sizes.control.items()}},
    }
    if args.only != "sentinel":
        delay_cells = summarize_delays(delays)
        control_cells = summarize_controls(controls)
        lines, drift_verdicts = drift_report(delay_cells, control_cells, sizes.detect_seeds)
        check = checks[0]
        out += [
            f"Streams: faithful {FAITHFUL} ± {WOBBLE} (sine, {PERIOD_HOURS // 24}-day period, "
            f"random phase), judge flips {FLIP:.0%} each way, baseline = first "
            f"{BASELINE_HOURS // 24} days, change {CHANGE_AFTER_HOURS} h after it; "
            f"DriftConfig(dimensions=(), false_alarms={SEGMENT_BUDGET})",
            "",
            *lines,
            f"cross-check (200/h, seed 0, drop {GOAL_DROP}): detect, sizing h from its own "
            f"measure of the traffic ({check['detect_per_day']:,.0f} records/day), fires at "
            f"record {check['alarm_record']} with h {check['detect_h']}, like first_alarm "
            f"with h {check['first_alarm_h']}: {'agrees' if check['agrees'] else 'DISAGREES'}",
            "",
        ]
        report["drift"] = {
            "config": {
                "false_alarms": SEGMENT_BUDGET,
                "share": SHARE,
                "shift": CONFIG.shift,
                "baseline_days": CONFIG.baseline_days,
                "baseline_records": CONFIG.baseline_records,
            },
            "stream": {
                "faithful": FAITHFUL,
                "drops": list(DROPS),
                "flip": FLIP,
                "wobble": WOBBLE,
                "period_hours": PERIOD_HOURS,
                "change_after_hours": CHANGE_AFTER_HOURS,
                "horizon_hours": HORIZON_HOURS,
            },
            "delays": delay_cells,
            "false_alarms": control_cells,
            "goal": {str(rate): ok for rate, ok in drift_verdicts.items()},
            "cross_check": check,
            "runs": [asdict(d) for d in delays],
            "control_runs": [asdict(c) for c in controls],
        }
    if args.only != "drift":
        summary = summarize_judge(judge_delays, judge_controls)
        lines, met = judge_report(summary, config)
        out += lines
        report["judge"] = {
            "config": asdict(config),
            "summary": summary,
            "goal": met,
            "runs": [asdict(d) for d in judge_delays],
            "control_runs": [asdict(c) for c in judge_controls],
        }
    print("\n".join(out))
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(
        json.dumps(jsonable(report), indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    print(f"\nwrote {relative(RESULTS)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
