"""Read API benchmark: p50/p95 of the read API and the dashboard over a store of 100,000
records, against a plain SELECT of the same rows, on SQLite and PostgreSQL.

Run from the repository root::

    python bench/api.py                     # stores of 10,000 then 100,000 records
    python bench/api.py --quick             # 1,000 then 5,000
    python bench/api.py --postgres-url ''   # SQLite only

Each backend gets a fresh database (a temporary SQLite file; ``faithmon_bench_<random>``
on the PostgreSQL server), ``faithmon db upgrade``'s schema, and records seeded in bulk
(``bench/api_store.py``): three tenants, four routes, three models, five chunks each from
a knowledge base of 2,000 documents, each record scored by one judge (about 8% with an
unsupported claim, about a third of those critical), a frozen baseline and four alerts. The app is
``create_app`` with ``sessions=`` and no auth, under uvicorn on 127.0.0.1 in a thread of
this process; one keep-alive connection asks each request in turn with its baseline
(``bench/api_probes.py``), run on the same engine. The store is measured at the first
size, grown to the second, and measured again.

Goals (issue 15): p95 under 50 ms for the list and the detail, under 200 ms for the
overview page, at 100,000 records. Results go to ``bench/results/api.json``.
"""

from __future__ import annotations

import argparse
import http.client
import math
import platform
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from api_probes import Probe, probes
from api_store import CONFIG, JUDGE, Store
from common import (
    DEFAULT_POSTGRES,
    RESULTS_DIR,
    columns,
    cpus,
    number,
    postgres_admin,
    postgres_database,
    ratio,
    run_facts,
    write_results,
)
from loopback import serve_in_thread

from faithmon.api.app import create_app
from faithmon.api.v1 import ReadOptions
from faithmon.ingest.pipeline import Pipeline
from faithmon.ingest.sampler import KeepAll
from faithmon.ingest.scrub import identity
from faithmon.jobs.drift import check_drift

RESULTS = RESULTS_DIR / "api.json"


@dataclass(frozen=True, slots=True)
class Sizes:
    stores: tuple[int, ...]
    repetitions: int
    budget: float
    """Seconds a figure may take; a slow one stops earlier, at no fewer than 5 samples."""


FULL = Sizes(stores=(10_000, 100_000), repetitions=60, budget=20.0)
QUICK = Sizes(stores=(1_000, 5_000), repetitions=15, budget=3.0)
WARM_UP = 2
LEAST = 5


def percentile(samples: Sequence[float], q: float) -> float:
    """Nearest rank: the smallest sample with at least ``q`` of them at or below it."""
    ordered = sorted(samples)
    return ordered[max(0, math.ceil(q * len(ordered)) - 1)]


@dataclass(frozen=True, slots=True)
class Timing:
    backend: str
    records: int
    probe: str
    request: str
    baseline: str
    baseline_sql: str
    goal_ms: float | None
    samples: tuple[float, ...]
    baseline_samples: tuple[float, ...]
    response_bytes: int

    @property
    def p50(self) -> float:
        return statistics.median(self.samples)

    @property
    def p95(self) -> float:
        return percentile(self.samples, 0.95)

    @property
    def base_p50(self) -> float:
        return statistics.median(self.baseline_samples)

    @property
    def base_p95(self) -> float:
        return percentile(self.baseline_samples, 0.95)

    @property
    def met(self) -> bool | None:
        return None if self.goal_ms is None else self.p95 < self.goal_ms

    def as_json(self) -> dict[str, Any]:
        return {
            "backend": self.backend,
            "records": self.records,
            "figure": self.probe,
            "request": self.request,
            "baseline": self.baseline,
            "baseline_sql": self.baseline_sql,
            "p50_ms": self.p50,
            "p95_ms": self.p95,
            "baseline_p50_ms": self.base_p50,
            "baseline_p95_ms": self.base_p95,
            "ratio_p50": self.p50 / self.base_p50,
            "ratio_p95": self.p95 / self.base_p95,
            "goal_p95_ms": self.goal_ms,
            "goal_met": self.met,
            "response_bytes": self.response_bytes,
            "samples_ms": list(self.samples),
            "baseline_samples_ms": list(self.baseline_samples),
        }


class Client:
    """GETs on one keep-alive connection; every answer must be 200."""

    def __init__(self, port: int) -> None:
        self.connection = http.client.HTTPConnection("127.0.0.1", port, timeout=300)

    def get(self, path: str) -> tuple[float, int]:
        started = time.perf_counter()
        self.connection.request("GET", path)
        response = self.connection.getresponse()
        body = response.read()
        elapsed = (time.perf_counter() - started) * 1000
        if response.status != 200:
            raise RuntimeError(f"GET {path} answered {response.status}: {body[:200]!r}")
        return elapsed, len(body)

    def close(self) -> None:
        self.connection.close()


def measure(store: Store, client: Client, probe: Probe, sizes: Sizes, backend: str) -> Timing:
    def baseline(n: int) -> float:
        started = time.perf_counter()
        with store.engine.connect() as connection:
            connection.execute(probe.baseline, probe.values(n)).all()
        return (time.perf_counter() - started) * 1000

    for n in range(WARM_UP):
        client.get(probe.path(n))
        baseline(n)
    samples: list[float] = []
    baseline_samples: list[float] = []
    size = 0
    deadline = time.perf_counter() + sizes.budget
    # Request and baseline in turn, so drift of the machine hits both alike.
    for n in range(sizes.repetitions):
        elapsed, size = client.get(probe.path(n))
        samples.append(elapsed)
        baseline_samples.append(baseline(n))
        if n + 1 >= LEAST and time.perf_counter() > deadline:
            break
    timing = Timing(
        backend,
        store.size,
        probe.name,
        f"GET {probe.path(0)}",
        probe.baseline_name,
        str(probe.baseline),
        probe.goal_ms,
        tuple(samples),
        tuple(baseline_samples),
        size,
    )
    print(
        f"  {backend} {store.size:,} {probe.name}: p50 {timing.p50:.1f} ms, "
        f"p95 {timing.p95:.1f} ms (baseline {timing.base_p50:.1f} / {timing.base_p95:.1f} ms, "
        f"{len(samples)} samples, {size:,} B)",
        file=sys.stderr,
        flush=True,
    )
    return timing


def run_backend(backend: str, url: str, sizes: Sizes) -> tuple[list[Timing], dict[str, float]]:
    store = Store(url, sizes.stores[-1])
    pipeline = Pipeline(lambda batch: None, sampler=KeepAll(), scrubber=identity)
    app = create_app(
        pipeline,
        sessions=store.sessions,
        # A worker keeps its drift run fresh in production; here one run per store size.
        reads=ReadOptions(judge=JUDGE, drift=CONFIG, stale_after=86400),
    )
    timings: list[Timing] = []
    seeding: dict[str, float] = {}
    try:
        with serve_in_thread(app) as port:
            for size in sizes.stores:
                seconds = store.grow(size)
                seeding[str(size)] = seconds
                # As the worker does every FAITHMON_WORKER_DRIFT_INTERVAL: /segments and the
                # overview serve this stored run.
                began = time.perf_counter()
                check_drift(store.sessions, JUDGE, CONFIG)
                seeding[f"{size} drift run"] = time.perf_counter() - began
                print(
                    f"{backend}: seeded to {size:,} records in {seconds:.1f}s, drift run "
                    f"{seeding[f'{size} drift run']:.1f}s",
                    file=sys.stderr,
                    flush=True,
                )
                client = Client(port)
                try:
                    for probe in probes(store.engine.dialect.name, store.trace_ids, store.newest()):
                        timings.append(measure(store, client, probe, sizes, backend))
                finally:
                    client.close()
    finally:
        store.close()
    return timings, seeding


def table(timings: Sequence[Timing]) -> list[str]:
    titles = (
        "backend",
        "records",
        "figure",
        "p50 ms",
        "p95 ms",
        "baseline",
        "base p50",
        "base p95",
        "÷base p50",
        "÷base p95",
        "goal p95",
    )
    rows = [
        (
            t.backend,
            f"{t.records:,}",
            t.probe,
            number(t.p50),
            number(t.p95),
            t.baseline,
            number(t.base_p50),
            number(t.base_p95),
            ratio(t.p50 / t.base_p50),
            ratio(t.p95 / t.base_p95),
            "–" if t.goal_ms is None else f"<{t.goal_ms:.0f} {'met' if t.met else 'MISSED'}",
        )
        for t in timings
    ]
    return columns(
        titles, rows, [False, True, False, True, True, False, True, True, True, True, True]
    )


def growth(timings: Sequence[Timing], small: int, large: int) -> list[str]:
    """How each figure's p50 and p95 grow from the first store size to the last."""
    at = {(t.backend, t.records, t.probe): t for t in timings}
    rows = []
    for t in timings:
        if t.records != small or (t.backend, large, t.probe) not in at:
            continue
        big = at[(t.backend, large, t.probe)]
        rows.append(
            (
                t.backend,
                t.probe,
                number(t.p95),
                number(big.p95),
                ratio(big.p50 / t.p50),
                ratio(big.p95 / t.p95),
                ratio(big.base_p95 / t.base_p95),
            )
        )
    titles = (
        "backend",
        "figure",
        f"p95 @{small:,}",
        f"p95 @{large:,}",
        "p50 growth",
        "p95 growth",
        "baseline p95 growth",
    )
    return columns(titles, rows, [False, False, True, True, True, True, True])


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="stores of 1,000 and 5,000 records")
    parser.add_argument(
        "--postgres-url",
        default=DEFAULT_POSTGRES,
        help=f"SQLAlchemy URL of a database to create the bench database from "
        f"('' skips PostgreSQL; default {DEFAULT_POSTGRES})",
    )
    args = parser.parse_args(argv)
    sizes = QUICK if args.quick else FULL
    mode = "quick" if args.quick else "full"
    started = time.perf_counter()
    timings: list[Timing] = []
    seeding: dict[str, dict[str, float]] = {}
    skipped: list[str] = []
    workdir = Path(tempfile.mkdtemp(prefix="faithmon-api-bench-"))
    try:
        found, seeding["sqlite"] = run_backend("SQLite", f"sqlite:///{workdir / 'api.db'}", sizes)
        timings += found
        admin, reason = postgres_admin(args.postgres_url)
        if admin is None:
            skipped.append(f"PostgreSQL skipped: {reason}")
            print(skipped[-1], file=sys.stderr)
        else:
            try:
                with postgres_database(admin) as url:
                    found, seeding["postgresql"] = run_backend("PostgreSQL", url, sizes)
                timings += found
            finally:
                admin.dispose()
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    elapsed = time.perf_counter() - started

    small, large = sizes.stores[0], sizes.stores[-1]
    goals = [t for t in timings if t.records == large and t.goal_ms is not None]
    met = all(t.met for t in goals)
    header = (
        f"faithmon read API bench ({mode}): Python {platform.python_version()} on "
        f"{platform.machine()}, {cpus()} CPUs, stores of {small:,} and {large:,} records, "
        f"up to {sizes.repetitions} requests a figure, {elapsed:.0f}s in all"
    )
    notes = [
        "ms per request over HTTP on 127.0.0.1 (one keep-alive connection, the body read); "
        "baseline: the plain SELECT on the same engine, its rows fetched, in turn with it",
        "÷base = faithmon / baseline; p95 by nearest rank; a slow figure stops after "
        f"{sizes.budget:g}s with at least {LEAST} samples",
        f"goals at {large:,} records (p95 < 50 ms list and detail, < 200 ms overview): "
        + (
            "met"
            if met
            else "MISSED: "
            + ", ".join(f"{t.backend} {t.probe} {number(t.p95)} ms" for t in goals if not t.met)
        ),
        *skipped,
    ]
    print("\n".join([header, "", *table(timings), "", *growth(timings, small, large), "", *notes]))
    report = {
        **run_facts(mode, elapsed),
        "stores": list(sizes.stores),
        "repetitions": sizes.repetitions,
        "seeding_seconds": seeding,
        "goal_met": met,
        "skipped": skipped,
        "figures": [t.as_json() for t in timings],
    }
    write_results(RESULTS, report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
