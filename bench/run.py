"""faithmon benchmarks: each figure with a ratio against a baseline measured in the same run.

Run from the repository root::

    python bench/run.py           # full sizes, about a minute or two on 2 cores
    python bench/run.py --quick   # small sizes, a few seconds

Figures (see bench/README.md):

1. traces/s of the demo app through the in-process pipeline into SQLite, against
   the same app whose shim writes to a provider with a do-nothing processor;
2. OTLP/HTTP receiver, spans/s and traces/s end to end into SQLite, against the
   same requests to a Starlette endpoint that answers 200 without decoding;
3. offline judge, judgements/s on the demo's answers, against sentence splitting;
4. µs per ``rag_span`` with 10 chunks of 1 KB, against the same three spans and
   attributes written by hand with the SDK (goal: at most 1.2 times).

Every figure is the median of several repetitions, timed with
``time.perf_counter``; figure and baseline repetitions alternate. Traffic goes to
127.0.0.1 only. Results are also written to ``bench/results/latest.json``.
"""

from __future__ import annotations

import argparse
import logging
import platform
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from common import RESULTS_DIR, Figure, run_facts, write_results
from common import render as common_render
from run_demo import TRACES_PER_REQUEST, bench_demo, bench_judge, bench_otlp
from run_shim import bench_span

RESULTS = RESULTS_DIR / "latest.json"


@dataclass(frozen=True, slots=True)
class Sizes:
    repetitions: int
    demo_traces: int
    otlp_traces: int
    judge_items: int
    span_iterations: int


QUICK = Sizes(repetitions=3, demo_traces=150, otlp_traces=200, judge_items=300, span_iterations=300)
FULL = Sizes(
    repetitions=5, demo_traces=3000, otlp_traces=5000, judge_items=10000, span_iterations=6000
)


def render(figures: Sequence[Figure], header: str) -> str:
    demo_figure = figures[0]
    added_ms = (1 / demo_figure.value - 1 / demo_figure.baseline_value) * 1000
    notes = [
        "ratio = value / baseline value (throughput: below 1 is slower; µs: above 1 costs more)",
        f"ingest + scrub + store add {added_ms:.2f} ms per trace in process",
    ]
    return common_render(figures, header, notes)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="small sizes: a few seconds")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    sizes = QUICK if args.quick else FULL

    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="faithmon-bench-") as tmp:
        workdir = Path(tmp)
        figures = [
            bench_demo(sizes.repetitions, sizes.demo_traces, workdir),
            *bench_otlp(sizes.repetitions, sizes.otlp_traces, workdir),
        ]
    figures += [
        bench_judge(sizes.repetitions, sizes.judge_items),
        bench_span(sizes.repetitions, sizes.span_iterations),
    ]
    elapsed = time.perf_counter() - started

    header = (
        f"faithmon bench ({'quick' if args.quick else 'full'}): Python "
        f"{platform.python_version()} on {platform.machine()}, "
        f"median of {sizes.repetitions} runs, {elapsed:.1f}s in all"
    )
    print(render(figures, header))

    report = {
        **run_facts("quick" if args.quick else "full", elapsed),
        "sizes": {
            "repetitions": sizes.repetitions,
            "demo_traces": sizes.demo_traces,
            "otlp_traces": sizes.otlp_traces,
            "otlp_traces_per_request": TRACES_PER_REQUEST,
            "judge_items": sizes.judge_items,
            "span_iterations": sizes.span_iterations,
        },
        "figures": [f.as_json() for f in figures],
    }
    write_results(RESULTS, report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
