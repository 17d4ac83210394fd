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
import multiprocessing
import platform
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, fields, replace
from typing import Any

from common import RESULTS_DIR, cpus, run_facts, write_results
from drift_report import (
    drift_report,
    jsonable,
    judge_report,
    summarize_controls,
    summarize_delays,
    summarize_judge,
)
from drift_sentinels import JudgeControl, JudgeDelay, judge_control_task, judge_detect_task
from drift_streams import (
    BASELINE_HOURS,
    CHANGE_AFTER_HOURS,
    CONFIG,
    DROPS,
    FAITHFUL,
    FLIP,
    GOAL_DROP,
    HORIZON_HOURS,
    PERIOD_HOURS,
    RATES,
    SEED,
    SEGMENT_BUDGET,
    SHARE,
    WOBBLE,
    Control,
    control_task,
    cross_check,
    detect_task,
)

from faithmon.drift.sentinels import JudgeDriftConfig

RESULTS = RESULTS_DIR / "drift.json"


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

Task = tuple[Callable[..., Any], tuple[Any, ...]]


def call(task: Task) -> Any:
    function, args = task
    return function(*args)


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
        **run_facts(mode, elapsed),
        "processes": args.processes,
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
    write_results(RESULTS, jsonable(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
