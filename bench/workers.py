"""Worker benchmark: records scored per second by ``faithmon worker`` processes on PostgreSQL.

Run from the repository root::

    python bench/workers.py                    # judge latency 1 s, 20 s of work per cell
    python bench/workers.py --quick            # judge latency 0.2 s, 2 s of work per cell
    python bench/workers.py --postgres-url URL # default postgresql+psycopg://postgres@127.0.0.1:5432/test

A loopback OpenAI-compatible judge (Starlette under uvicorn, in a thread of this
process) answers every request after ``asyncio.sleep(latency)``, so it serves any
number of requests at once. For each number of workers W (1, 3) and judge
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
import asyncio
import itertools
import json
import os
import platform
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import uvicorn
from common import (
    RESULTS_DIR,
    cpus,
    number,
    postgres_admin,
    postgres_database,
    ratio,
    relative,
)
from openai import OpenAI
from sqlalchemy import Engine, create_engine, func, select
from sqlalchemy.orm import sessionmaker
from sqlalchemy.pool import NullPool
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from faithmon.model import Chunk, RagRecord
from faithmon.store import repo
from faithmon.store.tables import EvaluationRow, RecordRow

RESULTS = RESULTS_DIR / "workers.json"
DEFAULT_POSTGRES = "postgresql+psycopg://postgres@127.0.0.1:5432/test"
MODEL = "loopback-judge"
GOAL = 0.8
CONTEXT = "Order A17 shipped on 3 March by courier from the Lyon warehouse."
SEED_BATCH = 500


@dataclass(frozen=True, slots=True)
class Sizes:
    latency: float
    """Seconds the loopback judge sleeps per request."""
    seconds: float
    """Seconds of work per cell at the bound: N = C x W x seconds / latency."""


FULL = Sizes(latency=1.0, seconds=20.0)
QUICK = Sizes(latency=0.2, seconds=2.0)


# The loopback judge.


class LoopbackJudge:
    """An OpenAI-compatible judge that calls every sentence under JUDGE supported by chunk 0.

    Each request sleeps ``latency`` seconds without blocking the event loop. The
    judge counts requests and keeps the time-weighted number of requests in flight,
    so a run can tell how much of the configured concurrency was really used.
    """

    def __init__(self, latency: float) -> None:
        self.latency = latency
        self._lock = threading.Lock()
        self.app = Starlette(routes=[Route("/v1/chat/completions", self._chat, methods=["POST"])])
        self.reset()

    def reset(self) -> None:
        with self._lock:
            self.requests = 0
            self.in_flight = 0
            self.peak = 0
            self.area = 0.0
            self.first_start: float | None = None
            self.last_end: float | None = None
            self._changed = time.monotonic()

    def _move(self, step: int) -> None:
        now = time.monotonic()
        with self._lock:
            self.area += self.in_flight * (now - self._changed)
            self._changed = now
            self.in_flight += step
            if step > 0:
                self.requests += 1
                self.peak = max(self.peak, self.in_flight)
                if self.first_start is None:
                    self.first_start = now
            else:
                self.last_end = now

    async def _chat(self, request: Request) -> Response:
        body = await request.json()
        self._move(+1)
        try:
            await asyncio.sleep(self.latency)
            prompt = body["messages"][-1]["content"]
            chunk = re.search(r"^\[C0\] (.+)$", prompt, flags=re.MULTILINE)
            targets = re.search(r"JUDGE: (.+)$", prompt, flags=re.MULTILINE)
            quote = chunk.group(1)[:18] if chunk else ""
            claims = [
                {
                    "sentence": int(t.strip()[1:]),
                    "claim": "claim",
                    "chunk": 0,
                    "quote": quote,
                    "verdict": "supported",
                }
                for t in (targets.group(1).split(",") if targets else [])
            ]
            content = json.dumps({"claims": claims})
            return JSONResponse(
                {
                    "id": "chatcmpl-bench",
                    "object": "chat.completion",
                    "created": int(time.time()),
                    "model": body["model"],
                    "choices": [
                        {
                            "index": 0,
                            "finish_reason": "stop",
                            "message": {"role": "assistant", "content": content},
                        }
                    ],
                    "usage": {"prompt_tokens": 50, "completion_tokens": 10, "total_tokens": 60},
                }
            )
        finally:
            self._move(-1)

    def load(self) -> Load:
        with self._lock:
            first, last = self.first_start, self.last_end
            window = (last - first) if first is not None and last is not None else 0.0
            return Load(
                requests=self.requests,
                peak_in_flight=self.peak,
                mean_in_flight=self.area / window if window > 0 else 0.0,
                first_start=first,
                last_end=last,
            )


@dataclass(frozen=True, slots=True)
class Load:
    """What the judge saw in one run."""

    requests: int
    peak_in_flight: int
    mean_in_flight: float
    """Requests in flight, averaged over the time from the first request to the last reply."""
    first_start: float | None
    last_end: float | None

    @property
    def window(self) -> float:
        if self.first_start is None or self.last_end is None:
            return 0.0
        return self.last_end - self.first_start


@contextmanager
def serve(app: Starlette) -> Iterator[str]:
    """Serve ``app`` with uvicorn on 127.0.0.1 in a thread; yields the base URL."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    # Accepted sockets inherit TCP_NODELAY on Linux. Without it, uvicorn serving a socket
    # handed to it answers each keep-alive request ~40 ms late (Nagle + delayed ACK).
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(1024)
    port: int = sock.getsockname()[1]
    server = uvicorn.Server(
        uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off", backlog=1024)
    )
    thread = threading.Thread(
        target=server.run, kwargs={"sockets": [sock]}, name="bench-judge", daemon=True
    )
    thread.start()
    try:
        deadline = time.monotonic() + 10
        while not server.started:
            if not thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("uvicorn did not start")
            time.sleep(0.01)
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()


def records(count: int) -> list[RagRecord]:
    """``count`` records, each answer a sentence the chunk does not hold verbatim."""
    now = datetime.now(UTC)
    return [
        RagRecord(
            trace_id=uuid.uuid4().hex,
            question="Where is order A17?",
            answer=f"The parcel number {n} left us on 3 March.",
            chunks=(Chunk(0, CONTEXT),),
            labels={"route": "shipping"},
            started_at=now - timedelta(seconds=count - n),
        )
        for n in range(count)
    ]


def seed(engine: Engine, count: int) -> None:
    sessions = sessionmaker(engine)
    items = records(count)
    for start in range(0, count, SEED_BATCH):
        with sessions.begin() as session:
            repo.save_records(session, items[start : start + SEED_BATCH])


@dataclass(frozen=True, slots=True)
class Tally:
    evaluations: int
    distinct: int
    statuses: dict[str, int]
    leased: int


def tally(engine: Engine) -> Tally:
    with engine.connect() as connection:
        evaluations = connection.scalar(select(func.count()).select_from(EvaluationRow)) or 0
        distinct = connection.scalar(select(func.count(func.distinct(EvaluationRow.record_id))))
        statuses = {
            str(status): int(count)
            for status, count in connection.execute(
                select(RecordRow.status, func.count()).group_by(RecordRow.status)
            )
        }
        leased = connection.scalar(
            select(func.count()).select_from(RecordRow).where(RecordRow.lease_owner.is_not(None))
        )
    return Tally(int(evaluations), int(distinct or 0), statuses, int(leased or 0))


# The runs.


def clean_env(**extra: str) -> dict[str, str]:
    """This process's environment without FAITHMON_* and OPENAI_*, plus ``extra``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("FAITHMON_", "OPENAI_"))}
    env.update(extra)
    return env


@dataclass(frozen=True, slots=True)
class WorkerRun:
    workers: int
    concurrency: int
    batch: int
    records: int
    seconds: float
    """From the first spawn until the last worker exited."""
    settled: tuple[int, ...]
    """Records each worker said it scored."""
    load: Load
    spawned: float
    exited: float
    evaluations: int
    distinct: int
    statuses: dict[str, int]
    leased: int

    @property
    def rate(self) -> float:
        return self.records / self.seconds

    @property
    def window_rate(self) -> float:
        """Records / seconds from the first judge request to the last reply."""
        return self.records / self.load.window if self.load.window > 0 else 0.0

    @property
    def start_up(self) -> float:
        """Seconds from the first spawn until the judge saw its first request."""
        return (self.load.first_start or self.exited) - self.spawned

    @property
    def wind_down(self) -> float:
        """Seconds from the last judge reply until the last worker exited."""
        return self.exited - (self.load.last_end or self.exited)

    @property
    def duplicates(self) -> int:
        return self.evaluations - self.distinct

    @property
    def extra_requests(self) -> int:
        return self.load.requests - self.records

    @property
    def clean(self) -> bool:
        """Every record judged once and scored, none left leased or duplicated."""
        return (
            self.duplicates == 0
            and self.extra_requests == 0
            and self.distinct == self.records
            and self.statuses == {"scored": self.records}
            and self.leased == 0
            and sum(self.settled) == self.records
        )

    def as_json(self) -> dict[str, Any]:
        return {
            "workers": self.workers,
            "concurrency": self.concurrency,
            "batch": self.batch,
            "records": self.records,
            "seconds": self.seconds,
            "records_per_second": self.rate,
            "judging_window_seconds": self.load.window,
            "judging_window_records_per_second": self.window_rate,
            "start_up_seconds": self.start_up,
            "wind_down_seconds": self.wind_down,
            "settled_per_worker": list(self.settled),
            "judge_requests": self.load.requests,
            "peak_in_flight": self.load.peak_in_flight,
            "mean_in_flight": self.load.mean_in_flight,
            "evaluations": self.evaluations,
            "distinct_records_evaluated": self.distinct,
            "duplicates": self.duplicates,
            "statuses": self.statuses,
            "leased_after": self.leased,
            "clean": self.clean,
        }


def run_workers(
    judge: LoopbackJudge,
    judge_url: str,
    admin: Engine,
    workdir: Path,
    workers: int,
    concurrency: int,
    batch: int,
    count: int,
) -> WorkerRun:
    tag = f"w{workers}-c{concurrency}-b{batch}"
    with postgres_database(admin) as url:
        env = clean_env(
            FAITHMON_DATABASE_URL=url,
            FAITHMON_JUDGE="openai",
            FAITHMON_JUDGE_MODEL=MODEL,
            FAITHMON_JUDGE_BASE_URL=judge_url,
            FAITHMON_JUDGE_API_KEY="x",
            FAITHMON_JUDGE_CONCURRENCY=str(concurrency),
            FAITHMON_JUDGE_RPM="0",
            FAITHMON_WORKER_BATCH=str(batch),
            FAITHMON_WORKER_HEARTBEAT_FILE=str(workdir / f"{tag}.heartbeat"),
            FAITHMON_LOG_LEVEL="WARNING",
        )
        subprocess.run(
            [sys.executable, "-m", "faithmon", "db", "upgrade"],
            env=env,
            cwd=workdir,
            check=True,
            capture_output=True,
        )
        engine = create_engine(url, poolclass=NullPool)
        try:
            seed(engine, count)
            judge.reset()
            logs = [workdir / f"{tag}-{i}.log" for i in range(workers)]
            outs = [workdir / f"{tag}-{i}.out" for i in range(workers)]
            spawned = time.monotonic()
            processes = []
            for out, log in zip(outs, logs, strict=True):
                with out.open("w") as stdout, log.open("w") as stderr:
                    processes.append(
                        subprocess.Popen(
                            [sys.executable, "-m", "faithmon", "worker", "--once"],
                            env=env,
                            cwd=workdir,
                            stdout=stdout,
                            stderr=stderr,
                        )
                    )
            limit = spawned + 60 + 5 * count * judge.latency / (concurrency * workers)
            for process in processes:
                try:
                    process.wait(timeout=max(1.0, limit - time.monotonic()))
                except subprocess.TimeoutExpired:
                    for other in processes:
                        other.kill()
                        other.wait()
                    raise RuntimeError(f"{tag}: workers still running after the deadline") from None
            exited = time.monotonic()
            load = judge.load()
            for process, log in zip(processes, logs, strict=True):
                if process.returncode != 0:
                    raise RuntimeError(
                        f"{tag}: a worker exited {process.returncode}:\n{log.read_text()[-2000:]}"
                    )
            settled = tuple(_scored(out.read_text()) for out in outs)
            counts = tally(engine)
        finally:
            engine.dispose()
    return WorkerRun(
        workers=workers,
        concurrency=concurrency,
        batch=batch,
        records=count,
        seconds=exited - spawned,
        settled=settled,
        load=load,
        spawned=spawned,
        exited=exited,
        evaluations=counts.evaluations,
        distinct=counts.distinct,
        statuses=counts.statuses,
        leased=counts.leased,
    )


def _scored(output: str) -> int:
    found = re.search(r"scored (\d+) records", output)
    if found is None:
        raise RuntimeError(f"no 'scored N records' in the worker's output: {output!r}")
    return int(found.group(1))


@dataclass(frozen=True, slots=True)
class BaselineRun:
    threads: int
    requests: int
    seconds: float
    errors: int
    load: Load

    @property
    def rate(self) -> float:
        return self.requests / self.seconds

    def as_json(self) -> dict[str, Any]:
        return {
            "threads": self.threads,
            "requests": self.requests,
            "seconds": self.seconds,
            "requests_per_second": self.rate,
            "errors": self.errors,
            "judge_requests": self.load.requests,
            "peak_in_flight": self.load.peak_in_flight,
            "mean_in_flight": self.load.mean_in_flight,
        }


def run_baseline(judge: LoopbackJudge, judge_url: str, threads: int, count: int) -> BaselineRun:
    """``threads`` threads share ``count`` requests, one at a time each, with one openai client."""
    client = OpenAI(api_key="x", base_url=judge_url, max_retries=0, timeout=60.0)
    message = f"Chunks:\n[C0] {CONTEXT}\nAnswer sentences:\nS0: The parcel left on 3 March.\n"
    tickets = itertools.count()
    lock = threading.Lock()
    errors: list[BaseException] = []

    def loop() -> None:
        while True:
            with lock:
                ticket = next(tickets)
            if ticket >= count:
                return
            try:
                client.chat.completions.create(
                    model=MODEL,
                    messages=[
                        {"role": "system", "content": "Judge each sentence."},
                        {"role": "user", "content": message + "JUDGE: S0"},
                    ],
                    temperature=0.0,
                )
            except Exception as exc:
                with lock:
                    errors.append(exc)

    judge.reset()
    pool = [threading.Thread(target=loop, name=f"baseline-{i}") for i in range(threads)]
    started = time.monotonic()
    for thread in pool:
        thread.start()
    for thread in pool:
        thread.join()
    seconds = time.monotonic() - started
    client.close()
    if errors:
        print(f"baseline: {len(errors)} errors, first: {errors[0]!r}", file=sys.stderr)
    return BaselineRun(threads, count, seconds, len(errors), judge.load())


# Output.


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
    widths = [max(len(t), *(len(r[i]) for r in rows)) for i, t in enumerate(titles)]

    def line(cells: Sequence[str]) -> str:
        return "  ".join(c.rjust(w) for c, w in zip(cells, widths, strict=True))

    return "\n".join([line(titles), line(["-" * w for w in widths]), *(line(r) for r in rows)])


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
    judge = LoopbackJudge(sizes.latency)
    cells: list[Cell] = []
    workdir = Path(tempfile.mkdtemp(prefix="faithmon-workers-bench-"))
    try:
        with serve(judge.app) as judge_url:
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

    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    report = {
        "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "mode": mode,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpus": cpus(),
        "seconds": elapsed,
        "sizes": asdict(sizes),
        "batch_factors": list(factors),
        "goal_ratio_to_bound": GOAL,
        "goal_met": met,
        "cells": [c.as_json() for c in cells],
    }
    RESULTS.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"\nwrote {relative(RESULTS)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
