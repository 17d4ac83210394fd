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

Figures (see bench/README.md), each run against a fresh database and a fresh
server process:

1. traces/s from the first POST until ``SELECT count(*) FROM records`` reaches
   the number of traces, with ``faithmon serve`` on SQLite and on PostgreSQL,
   against the same bodies POSTed to a bare Starlette app under uvicorn in its
   own process (the HTTP cost);
2. the serve process's peak RSS (VmHWM), against the bare server's;
3. when arize-phoenix is installed (``--phoenix``, or /tmp/phoenix-venv/bin/phoenix),
   faithmon on SQLite against ``phoenix serve`` on SQLite, stored spans counted
   in its ``spans`` table, and their peak RSS.

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
from dataclasses import dataclass, field
from pathlib import Path

from common import (
    DEFAULT_POSTGRES,
    RESULTS_DIR,
    Figure,
    cpus,
    number,
    postgres_admin,
    postgres_database,
    render,
    run_facts,
    write_results,
)
from ingest_payload import CHUNKS, TRACES_PER_REQUEST, Payload, make_payload
from ingest_runs import QUIET_SECONDS, Run, run_bare, run_faithmon
from peers import arize_phoenix

RESULTS = RESULTS_DIR / "ingest.json"


@dataclass(frozen=True, slots=True)
class Sizes:
    requests: int
    repetitions: int
    # Phoenix ingests far slower and takes ~10 s to start: fewer runs keep the time down.
    phoenix_repetitions: int


QUICK = Sizes(requests=5, repetitions=1, phoenix_repetitions=1)
FULL = Sizes(requests=30, repetitions=3, phoenix_repetitions=1)


# The benchmark.


@dataclass(slots=True)
class Results:
    sqlite: list[Run] = field(default_factory=list)
    postgres: list[Run] = field(default_factory=list)
    bare: list[Run] = field(default_factory=list)
    phoenix: list[Run] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def _rates(runs: Sequence[Run], items: int) -> tuple[float, ...]:
    return tuple(items / r.seconds for r in runs)


def _accepted(runs: Sequence[Run], items: int) -> tuple[float, ...]:
    return tuple(items / r.post_seconds for r in runs)


def _rss(runs: Sequence[Run]) -> tuple[float, ...]:
    return tuple(r.peak_rss_mib for r in runs)


def figures(results: Results, payload: Payload) -> list[Figure]:
    traces = payload.traces
    bare = "same bodies → bare Starlette 200 (own process)"
    out = [
        Figure(
            "faithmon serve → SQLite, POST to stored",
            "traces/s",
            _rates(results.sqlite, traces),
            bare,
            _rates(results.bare, traces),
            higher_is_better=True,
        )
    ]
    out.append(
        Figure(
            "faithmon serve → SQLite, POSTs answered",
            "traces/s",
            _accepted(results.sqlite, traces),
            bare,
            _rates(results.bare, traces),
            higher_is_better=True,
        )
    )
    if results.postgres:
        out.append(
            Figure(
                "faithmon serve → PostgreSQL, POST to stored",
                "traces/s",
                _rates(results.postgres, traces),
                bare,
                _rates(results.bare, traces),
                higher_is_better=True,
            )
        )
    if results.phoenix:
        out.append(
            Figure(
                "faithmon serve → SQLite, POST to stored",
                "traces/s",
                _rates(results.sqlite, traces),
                "phoenix serve → SQLite, POST to stored",
                _rates(results.phoenix, traces),
                higher_is_better=True,
            )
        )
    bare_rss = "bare Starlette server, peak RSS"
    out.append(
        Figure(
            "faithmon serve (SQLite), peak RSS",
            "MiB",
            _rss(results.sqlite),
            bare_rss,
            _rss(results.bare),
            higher_is_better=False,
            peak=True,
        )
    )
    if results.postgres:
        out.append(
            Figure(
                "faithmon serve (PostgreSQL), peak RSS",
                "MiB",
                _rss(results.postgres),
                bare_rss,
                _rss(results.bare),
                higher_is_better=False,
                peak=True,
            )
        )
    if results.phoenix:
        out.append(
            Figure(
                "faithmon serve (SQLite), peak RSS",
                "MiB",
                _rss(results.sqlite),
                "phoenix serve (SQLite), peak RSS",
                _rss(results.phoenix),
                higher_is_better=False,
                peak=True,
            )
        )
    return out


def _logged(label: str, run: Run, items: int) -> Run:
    print(
        f"  {label}: {items / run.seconds:,.0f} traces/s ({run.seconds:.2f}s, "
        f"POSTs {run.post_seconds:.2f}s, peak RSS {run.peak_rss_mib:.0f} MiB, "
        f"{run.retries_503} × 503, {run.not_pending} records not pending)",
        file=sys.stderr,
        flush=True,
    )
    return run


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="5 requests per run, one run each")
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
    mode = "quick" if args.quick else "full"

    started = time.perf_counter()
    payload = make_payload(sizes.requests)
    print(
        f"payload: {len(payload.bodies)} requests of {TRACES_PER_REQUEST} traces "
        f"({payload.spans} spans, {payload.body_bytes / len(payload.bodies) / 1e6:.2f} MB "
        f"per request; chunks of {payload.chunk_bytes:.0f} B on average, "
        f"{payload.pii_chunks} of {payload.traces * CHUNKS} with an e-mail or phone number), "
        f"built in {time.perf_counter() - started:.1f}s",
        file=sys.stderr,
    )

    results = Results()
    admin, postgres_skip = postgres_admin(args.postgres_url)
    if admin is None:
        results.notes.append(f"PostgreSQL skipped: {postgres_skip}")
        print(results.notes[-1], file=sys.stderr)
    phoenix, phoenix_skip = arize_phoenix.phoenix_path(args.phoenix)
    phoenix_version = arize_phoenix.phoenix_version(phoenix) if phoenix else None
    if phoenix is None:
        results.notes.append(f"Phoenix skipped: {phoenix_skip}")
        print(results.notes[-1], file=sys.stderr)

    workdir = Path(tempfile.mkdtemp(prefix="faithmon-ingest-bench-"))
    try:
        for repetition in range(1, sizes.repetitions + 1):
            print(f"repetition {repetition} of {sizes.repetitions}", file=sys.stderr)
            traces = payload.traces
            tag = f"sqlite-{repetition}"
            run = run_faithmon(payload, f"sqlite:///{workdir / (tag + '.db')}", workdir, tag)
            results.sqlite.append(_logged("faithmon → SQLite", run, traces))
            results.bare.append(_logged("bare Starlette", run_bare(payload, workdir), traces))
            if admin is not None:
                with postgres_database(admin) as url:
                    run = run_faithmon(payload, url, workdir, f"postgres-{repetition}")
                results.postgres.append(_logged("faithmon → PostgreSQL", run, traces))
            if phoenix is not None and repetition <= sizes.phoenix_repetitions:
                run = arize_phoenix.run_phoenix(payload, phoenix, workdir, f"phoenix-{repetition}")
                results.phoenix.append(_logged(f"phoenix {phoenix_version} → SQLite", run, traces))
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
        if admin is not None:
            admin.dispose()
    elapsed = time.perf_counter() - started

    table = figures(results, payload)
    not_pending = sum(r.not_pending for r in (*results.sqlite, *results.postgres))
    retries = {
        name: sum(r.retries_503 for r in runs)
        for name, runs in (
            ("faithmon_sqlite", results.sqlite),
            ("faithmon_postgres", results.postgres),
            ("bare", results.bare),
            ("phoenix", results.phoenix),
        )
    }
    sqlite_rate = table[0].value
    notes = [
        "ratio = value / baseline value (traces/s: below 1 is slower; MiB: above 1 uses more)",
        f"traces/s: median of {sizes.repetitions} runs (Phoenix: {len(results.phoenix)}); "
        "peak RSS: largest VmHWM of the runs; each run a fresh server process and database",
        f"goal ≥ 1,000 traces/s on SQLite: {'met' if sqlite_rate >= 1000 else 'MISSED'} "
        f"({number(sqlite_rate)} traces/s)",
        "503 answers retried: " + ", ".join(f"{k} {v}" for k, v in retries.items()),
        f"records stored not pending (evicted or incomplete; should be 0): {not_pending}",
        *results.notes,
    ]
    if phoenix_version:
        notes.append(f"Phoenix: arize-phoenix {phoenix_version} ({phoenix})")
    header = (
        f"faithmon ingest bench ({mode}): Python {platform.python_version()} on "
        f"{platform.machine()}, {cpus()} CPUs, {payload.traces:,} traces in "
        f"{len(payload.bodies)} requests of {TRACES_PER_REQUEST} per run, {elapsed:.0f}s in all"
    )
    print(render(table, header, notes))

    report = {
        **run_facts(mode, elapsed),
        "payload": {
            "requests": len(payload.bodies),
            "traces_per_request": TRACES_PER_REQUEST,
            "traces": payload.traces,
            "spans": payload.spans,
            "chunks_per_trace": CHUNKS,
            "mean_chunk_bytes": payload.chunk_bytes,
            "chunks_with_pii": payload.pii_chunks,
            "body_bytes": payload.body_bytes,
        },
        "repetitions": sizes.repetitions,
        "assembly_quiet_seconds": float(QUIET_SECONDS),
        "goal_traces_per_second_sqlite": 1000,
        "goal_met": sqlite_rate >= 1000,
        "retries_503": retries,
        "records_not_pending": not_pending,
        "skipped": results.notes,
        "phoenix_version": phoenix_version,
        "runs": {
            name: [r.as_json() for r in runs]
            for name, runs in (
                ("faithmon_sqlite", results.sqlite),
                ("faithmon_postgres", results.postgres),
                ("bare", results.bare),
                ("phoenix", results.phoenix),
            )
        },
        "figures": [f.as_json() for f in table],
    }
    write_results(RESULTS, report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
