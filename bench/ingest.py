"""Ingest benchmark: OTLP protobuf requests into a real ``faithmon serve``, until stored.

Run from the repository root::

    python bench/ingest.py                     # 30 requests (3,000 traces) per run
    python bench/ingest.py --quick             # 5 requests (500 traces) per run
    python bench/ingest.py --postgres-url ''   # skip PostgreSQL

Each trace is written by the shim (``rag_span``, ``record_retrieval`` of 10
chunks of about 1 KB, ``record_answer``: three spans). The chunk texts are
generated, so no two traces repeat one, and about a third of them hold an
e-mail address or a phone number for the scrubber to replace. The traces are
encoded before timing into ExportTraceServiceRequest bodies of 100 traces.

A second payload of the same size draws 30% of its chunks from 500 knowledge-base
chunks that recur across traces, as real traffic does, to show what the caches give.

Figures (see bench/README.md), each run against a fresh database and a fresh
server process, for both payloads:

1. traces/s from the first POST until ``SELECT count(*) FROM records`` reaches
   the number of traces, with ``faithmon serve`` on SQLite and on PostgreSQL
   (FAITHMON_INGEST_PROCESSES=0, the default: all on the pipeline thread), against
   ``phoenix serve`` on SQLite when arize-phoenix is installed (``--phoenix``, or
   /tmp/phoenix-venv/bin/phoenix; its stored spans counted in its ``spans`` table),
   else against a bare Starlette app under uvicorn in its own process;
2. the same with FAITHMON_INGEST_PROCESSES=auto (a worker process per core):
   what the worker processes give, in traces/s and in server CPU per trace;
3. the peak RSS of the server's process tree (each process's VmHWM, summed),
   against Phoenix's;
4. the time per trace of each pipeline step (``ingest_profile.py``).

Traffic goes to 127.0.0.1 only. Results are also written to
``bench/results/ingest.json``.
"""

from __future__ import annotations

import argparse
import platform
import shutil
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from common import (
    DEFAULT_POSTGRES,
    RESULTS_DIR,
    cpus,
    postgres_admin,
    postgres_database,
    render,
    run_facts,
    write_results,
)
from ingest_figures import GOALS, PAYLOADS, Results, figures, goal_notes
from ingest_payload import CHUNKS, TRACES_PER_REQUEST, Payload, make_payload
from ingest_profile import breakdown, render_breakdown
from ingest_runs import QUIET_SECONDS, Run, run_bare, run_faithmon
from peers import arize_phoenix

RESULTS = RESULTS_DIR / "ingest.json"


@dataclass(frozen=True, slots=True)
class Sizes:
    requests: int
    repetitions: int


QUICK = Sizes(requests=5, repetitions=1)
FULL = Sizes(requests=30, repetitions=3)
MODES = ("0", "auto")  # FAITHMON_INGEST_PROCESSES: on the pipeline thread, then workers


def _logged(label: str, run: Run, items: int) -> Run:
    print(
        f"  {label}: {items / run.seconds:,.0f} traces/s ({run.seconds:.2f}s, "
        f"POSTs {run.post_seconds:.2f}s, peak RSS {run.peak_rss_mib:.0f} MiB, "
        f"CPU {run.cpu_seconds / items * 1e3:.2f} ms per trace, "
        f"{run.retries_503} × 503, {run.not_pending} records not pending)",
        file=sys.stderr,
        flush=True,
    )
    return run


def _describe(name: str, payload: Payload) -> None:
    print(
        f"payload {name}: {len(payload.bodies)} requests of {TRACES_PER_REQUEST} traces "
        f"({payload.spans} spans, {payload.body_bytes / len(payload.bodies) / 1e6:.2f} MB "
        f"per request; chunks of {payload.chunk_bytes:.0f} B on average, "
        f"{payload.pii_chunks} of {payload.traces * CHUNKS} with an e-mail or phone number)",
        file=sys.stderr,
    )


def _repetition(
    results: Results,
    payloads: dict[str, Payload],
    workdir: Path,
    admin: object,
    phoenix: Path | None,
    repetition: int,
) -> None:
    for name, payload in payloads.items():
        traces = payload.traces
        for mode in MODES:
            tag = f"{name}-sqlite-{mode}-{repetition}"
            run = run_faithmon(payload, f"sqlite:///{workdir / (tag + '.db')}", workdir, tag, mode)
            results.add(
                name, "sqlite", mode, _logged(f"{name}: SQLite, processes {mode}", run, traces)
            )
            if admin is not None:
                with postgres_database(admin) as url:  # type: ignore[arg-type]
                    tag = f"{name}-postgres-{mode}-{repetition}"
                    run = run_faithmon(payload, url, workdir, tag, mode)
                label = f"{name}: PostgreSQL, processes {mode}"
                results.add(name, "postgres", mode, _logged(label, run, traces))
        if repetition == 1:
            if phoenix is not None:
                run = arize_phoenix.run_phoenix(payload, phoenix, workdir, f"phoenix-{name}")
                results.add(name, "phoenix", "", _logged(f"{name}: phoenix", run, traces))
            else:
                run = run_bare(payload, workdir)
                results.add(name, "bare", "", _logged(f"{name}: bare Starlette", run, traces))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="5 requests per run, one run each")
    parser.add_argument("--repetitions", type=int, default=None, help="runs of each faithmon setup")
    parser.add_argument(
        "--postgres-url",
        default=DEFAULT_POSTGRES,
        help=f"SQLAlchemy URL of a database to connect to and create the bench database from "
        f"('' skips PostgreSQL; default {DEFAULT_POSTGRES})",
    )
    parser.add_argument(
        "--phoenix",
        default=None,
        help="path of arize-phoenix's `phoenix` command (default: "
        f"{arize_phoenix.DEFAULT_PHOENIX} if it exists; '' skips Phoenix)",
    )
    args = parser.parse_args(argv)
    sizes = QUICK if args.quick else FULL
    repetitions = args.repetitions or sizes.repetitions
    mode = "quick" if args.quick else "full"

    started = time.perf_counter()
    payloads = {name: make_payload(sizes.requests, repeat) for name, repeat in PAYLOADS.items()}
    for name, payload in payloads.items():
        _describe(name, payload)
    results = Results()
    admin, postgres_skip = postgres_admin(args.postgres_url)
    if admin is None:
        results.notes.append(f"PostgreSQL skipped: {postgres_skip}")
        print(results.notes[-1], file=sys.stderr)
    phoenix, phoenix_skip = arize_phoenix.phoenix_path(args.phoenix)
    phoenix_version = arize_phoenix.phoenix_version(phoenix) if phoenix else None
    if phoenix is None:
        results.notes.append(f"Phoenix skipped: {phoenix_skip}; baseline is a bare server")
        print(results.notes[-1], file=sys.stderr)

    workdir = Path(tempfile.mkdtemp(prefix="faithmon-ingest-bench-"))
    steps: dict[str, dict[str, float]] = {}
    try:
        for repetition in range(1, repetitions + 1):
            print(f"repetition {repetition} of {repetitions}", file=sys.stderr)
            _repetition(results, payloads, workdir, admin, phoenix, repetition)
        for name, payload in payloads.items():
            if admin is not None:
                with postgres_database(admin) as url:
                    steps[name] = breakdown(payload, url)
            else:
                steps[name] = breakdown(payload, None)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
        if admin is not None:
            admin.dispose()
    elapsed = time.perf_counter() - started

    table = figures(results, payloads)
    notes = [
        "ratio = value / baseline value (traces/s: below 1 is slower; MiB: above 1 uses more)",
        f"traces/s: median of {repetitions} runs (Phoenix: 1); peak RSS: largest of the runs, "
        "each the VmHWM of every process of the server summed; a fresh server and database "
        "each run",
        *goal_notes(results, payloads),
        "503 answers retried: " + ", ".join(f"{k} {v}" for k, v in results.retries().items()),
        f"records stored not pending (evicted or incomplete; should be 0): {results.not_pending()}",
        *results.notes,
    ]
    if phoenix_version:
        notes.append(f"Phoenix: arize-phoenix {phoenix_version} ({phoenix})")
    header = (
        f"faithmon ingest bench ({mode}): Python {platform.python_version()} on "
        f"{platform.machine()}, {cpus()} CPUs, {sizes.requests * TRACES_PER_REQUEST:,} traces "
        f"in {sizes.requests} requests of {TRACES_PER_REQUEST} per run, {elapsed:.0f}s in all"
    )
    print(render(table, header, notes))
    print()
    print(render_breakdown(steps))

    report = {
        **run_facts(mode, elapsed),
        "payloads": {
            name: {
                "requests": len(p.bodies),
                "traces": p.traces,
                "spans": p.spans,
                "chunks_per_trace": CHUNKS,
                "repeated_chunk_share": PAYLOADS[name],
                "mean_chunk_bytes": p.chunk_bytes,
                "chunks_with_pii": p.pii_chunks,
                "body_bytes": p.body_bytes,
            }
            for name, p in payloads.items()
        },
        "repetitions": repetitions,
        "assembly_quiet_seconds": float(QUIET_SECONDS),
        "goals": GOALS,
        "retries_503": results.retries(),
        "records_not_pending": results.not_pending(),
        "skipped": results.notes,
        "phoenix_version": phoenix_version,
        "runs": results.as_json(),
        "microseconds_per_trace_by_step": steps,
        "figures": [f.as_json() for f in table],
    }
    write_results(RESULTS, report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
