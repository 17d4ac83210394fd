"""Worker benchmark: records scored per second by ``faithmon worker`` processes on PostgreSQL.

Run from the repository root::

    python bench/workers.py                    # judge latency 1 s, 20 s of work per cell
    python bench/workers.py --quick            # judge latency 0.2 s, 2 s of work per cell
    python bench/workers.py --postgres-url URL # default postgresql+psycopg://postgres@127.0.0.1:5432/test

A loopback OpenAI-compatible judge (``tests/openai_server.py`` under uvicorn, in a
thread of this process) answers every request after ``asyncio.sleep(latency)``, so it
serves any number of requests at once. For each number of workers W (1, 3) and judge
concurrency C (8, 32), in a fresh PostgreSQL database:

1. ``faithmon db upgrade``, then N = C x W x (seconds of work / latency) pending
   records whose answers are not verbatim in their chunk, so each costs exactly
   one judge call;
2. W processes of ``python -m faithmon worker --once`` with ``FAITHMON_JUDGE=openai``,
   ``FAITHMON_JUDGE_CONCURRENCY=C``, ``FAITHMON_JUDGE_RPM=0`` and
   ``FAITHMON_WORKER_BATCH`` = C x batch factor, timed from the first spawn until
   the last exits;
3. evaluations, distinct evaluated records, record statuses and the requests the
   judge received are counted: every record once, no duplicate, no extra call.

Figure: records/s. The bound is C x W / latency, what the configured concurrency
allows; the goal is at least 0.8 times the bound with zero duplicates. The
baseline, measured in the same run and in turn with the workers: the same judge
driven by C x W threads of this process, each making requests with the openai
client in a loop until N requests were answered (the most the endpoint gives).

Traffic goes to 127.0.0.1 only. Results are also written to
``bench/results/workers.json``.
"""

from __future__ import annotations

import argparse
import platform
import shutil
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from common import (
    DEFAULT_POSTGRES,
    RESULTS_DIR,
    columns,
    cpus,
    number,
    postgres_admin,
    ratio,
    run_facts,
    write_results,
)
from loopback import serve_in_thread
from workers_runs import BaselineRun, WorkerRun, run_baseline, run_workers

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.openai_server import OpenAIServer, supporting

RESULTS = RESULTS_DIR / "workers.json"
GOAL = 0.8


@dataclass(frozen=True, slots=True)
class Sizes:
    latency: float
    """Seconds the loopback judge sleeps per request."""
    seconds: float
    """Seconds of work per cell at the bound: N = C x W x seconds / latency."""


FULL = Sizes(latency=1.0, seconds=20.0)
QUICK = Sizes(latency=0.2, seconds=2.0)


@dataclass(frozen=True, slots=True)
class Cell:
    run: WorkerRun
    baseline: BaselineRun
    latency: float

    @property
    def bound(self) -> float:
        return self.run.concurrency * self.run.workers / self.latency

    @property
    def use(self) -> float:
        return self.run.rate / self.bound

    @property
    def met(self) -> bool:
        return self.use >= GOAL and self.run.clean

    def as_json(self) -> dict[str, Any]:
        return {
            "bound_records_per_second": self.bound,
            "ratio_to_bound": self.use,
            "baseline_ratio_to_bound": self.baseline.rate / self.bound,
            "ratio_to_baseline": self.run.rate / self.baseline.rate,
            "goal_met": self.met,
            "workers": self.run.as_json(),
            "baseline": self.baseline.as_json(),
        }


def table(cells: Sequence[Cell]) -> str:
    titles = (
        "W",
        "C",
        "batch",
        "N",
        "records/s",
        "bound",
        "÷bound",
        "baseline req/s",
        "base÷bound",
        "÷baseline",
        "judging rec/s",
        "start s",
        "end s",
        "in flight",
        "dup",
        "calls−N",
    )
    rows = [
        (
            str(c.run.workers),
            str(c.run.concurrency),
            str(c.run.batch),
            str(c.run.records),
            number(c.run.rate),
            number(c.bound),
            ratio(c.use),
            number(c.baseline.rate),
            ratio(c.baseline.rate / c.bound),
            ratio(c.run.rate / c.baseline.rate),
            number(c.run.window_rate),
            f"{c.run.start_up:.2f}",
            f"{c.run.wind_down:.2f}",
            f"{c.run.load.mean_in_flight:.1f}/{c.run.load.peak_in_flight}",
            str(c.run.duplicates),
            str(c.run.extra_requests),
        )
        for c in cells
    ]
    return "\n".join(columns(titles, rows, [True] * len(titles)))


def _numbers(value: str) -> tuple[int, ...]:
    return tuple(int(v) for v in value.split(",") if v.strip())


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="latency 0.2 s, 2 s of work a cell")
    parser.add_argument(
        "--postgres-url",
        default=DEFAULT_POSTGRES,
        help=f"SQLAlchemy URL of a database to create the bench databases from "
        f"(default {DEFAULT_POSTGRES})",
    )
    parser.add_argument("--workers", default="1,3", help="worker processes (default 1,3)")
    parser.add_argument("--concurrency", default="8,32", help="judge concurrency (default 8,32)")
    parser.add_argument(
        "--batch-factors",
        default="1",
        help="FAITHMON_WORKER_BATCH as multiples of the concurrency; each gets a row (default 1)",
    )
    parser.add_argument("--latency", type=float, default=None, help="judge latency, seconds")
    parser.add_argument("--seconds", type=float, default=None, help="work per cell at the bound")
    args = parser.parse_args(argv)
    base = QUICK if args.quick else FULL
    sizes = Sizes(
        latency=args.latency if args.latency is not None else base.latency,
        seconds=args.seconds if args.seconds is not None else base.seconds,
    )
    mode = "quick" if args.quick else "full"
    factors = _numbers(args.batch_factors)

    admin, reason = postgres_admin(args.postgres_url)
    if admin is None:
        print(f"PostgreSQL unreachable, worker bench skipped: {reason}")
        return 0

    started = time.perf_counter()
    # Every sentence supported: each record costs one call and settles as scored.
    judge = OpenAIServer(supporting, latency=sizes.latency)
    cells: list[Cell] = []
    workdir = Path(tempfile.mkdtemp(prefix="faithmon-workers-bench-"))
    try:
        with serve_in_thread(judge.app, backlog=1024) as port:
            judge_url = f"http://127.0.0.1:{port}/v1"
            for workers in _numbers(args.workers):
                for concurrency in _numbers(args.concurrency):
                    count = round(concurrency * workers * sizes.seconds / sizes.latency)
                    runs = []
                    for factor in factors:
                        run = run_workers(
                            judge,
                            judge_url,
                            admin,
                            workdir,
                            workers,
                            concurrency,
                            concurrency * factor,
                            count,
                        )
                        runs.append(run)
                        print(
                            f"W={workers} C={concurrency} batch={run.batch}: N={count} in "
                            f"{run.seconds:.2f}s, {run.rate:.1f} records/s "
                            f"(start-up {run.start_up:.2f}s, judging {run.load.window:.2f}s, "
                            f"wind-down {run.wind_down:.2f}s, mean in flight "
                            f"{run.load.mean_in_flight:.1f}, clean {run.clean})",
                            file=sys.stderr,
                        )
                    baseline = run_baseline(judge, judge_url, concurrency * workers, count)
                    print(
                        f"W={workers} C={concurrency} baseline: {baseline.rate:.1f} requests/s "
                        f"({baseline.errors} errors)",
                        file=sys.stderr,
                    )
                    cells += [Cell(run, baseline, sizes.latency) for run in runs]
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
        admin.dispose()
    elapsed = time.perf_counter() - started

    goal_cells = [c for c in cells if c.run.batch == c.run.concurrency * factors[0]]
    met = all(c.met for c in goal_cells)
    header = (
        f"faithmon worker bench ({mode}): Python {platform.python_version()} on "
        f"{platform.machine()}, {cpus()} CPUs, PostgreSQL, judge latency {sizes.latency:g}s, "
        f"{sizes.seconds:g}s of work per cell at the bound, one run each, {elapsed:.0f}s in all"
    )
    notes = [
        "W workers x C concurrency; bound = C x W / latency; ÷bound = records/s / bound "
        f"(goal ≥ {GOAL}); baseline = C x W threads with the openai client, N requests",
        "records/s: N / seconds from the first spawn until the last worker exited; judging "
        "rec/s: N / seconds from the first judge request to the last reply",
        "start s: spawn to first judge request; end s: last reply to last exit; in flight: "
        "judge requests in flight, time-weighted mean / peak",
        "dup: evaluations − distinct records evaluated; calls−N: judge requests beyond one "
        "per record",
        "goal (batch = "
        + (f"{factors[0]} x C" if factors[0] != 1 else "C")
        + f"): {'met' if met else 'MISSED'} — "
        + ", ".join(
            f"W={c.run.workers} C={c.run.concurrency} {c.use:.2f}x"
            f"{'' if c.run.clean else ' NOT CLEAN'}"
            for c in goal_cells
        ),
    ]
    print("\n".join([header, "", table(cells), "", *notes]))

    report = {
        **run_facts(mode, elapsed),
        "sizes": asdict(sizes),
        "batch_factors": list(factors),
        "goal_ratio_to_bound": GOAL,
        "goal_met": met,
        "cells": [c.as_json() for c in cells],
    }
    write_results(RESULTS, report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
