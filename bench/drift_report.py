"""The drift bench's figures: delays and false-alarm rates summarized over the seeds,
with exact Poisson intervals, and the tables and goal lines it prints."""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Sequence
from typing import Any

from common import columns
from drift_sentinels import (
    ACCURACY,
    ACCURACY_AFTER,
    GOAL_JUDGE_ALARMS,
    GOAL_RUNS,
    RUNS_AFTER_DROP,
    RUNS_BEFORE_DROP,
    SENTINEL_CASES,
    JudgeControl,
    JudgeDelay,
)
from drift_streams import (
    CHANGE_AFTER_HOURS,
    DETECTORS,
    DROPS,
    FAITHFUL,
    GOAL_DROP,
    GOAL_RECORDS,
    HORIZON_HOURS,
    RATES,
    SEGMENT_BUDGET,
    SHARE,
    Control,
    Delay,
    unsupported_rate,
)

from faithmon.drift.sentinels import JudgeDriftConfig


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
    return "\n".join(columns(titles, rows))


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
        f"(budget {SHARE:.2f} = {SEGMENT_BUDGET} per segment / {DETECTORS} detectors)",
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
