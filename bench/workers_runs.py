"""One cell of the workers bench: W ``faithmon worker --once`` processes against the
loopback judge in a fresh PostgreSQL database, and the baseline, the same judge driven
by C x W threads of this process with one openai client."""

from __future__ import annotations

import itertools
import re
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from common import postgres_database
from loopback import clean_env
from openai import OpenAI
from sqlalchemy import Engine, create_engine
from sqlalchemy.pool import NullPool
from workers_store import CONTEXT, seed, tally

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.openai_server import Load, OpenAIServer

MODEL = "loopback-judge"


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
    judge: OpenAIServer,
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
            ("FAITHMON_", "OPENAI_"),
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


def run_baseline(judge: OpenAIServer, judge_url: str, threads: int, count: int) -> BaselineRun:
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
