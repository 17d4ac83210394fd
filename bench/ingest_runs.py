"""One ingest run: POST the payload to a server process and time it until every trace is
stored; faithmon serve (SQLite or PostgreSQL) and the bare Starlette baseline."""

from __future__ import annotations

import http.client
import os
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from common import PROTOBUF, SCRUB_KEY
from ingest_payload import Payload
from loopback import Server, clean_env, free_port, serve
from sqlalchemy import Engine, create_engine, text
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.pool import NullPool

QUIET_SECONDS = "0.2"
# Seconds to wait, after the last POST, for every record to be stored.
STORE_DEADLINE = 300.0
POLL_SECONDS = 0.02
# Retry-After when a 503 does not say (Phoenix's does not).
DEFAULT_RETRY_AFTER = 1.0
# The servers' environment: none of this process's faithmon or Phoenix settings.
STRIP = ("FAITHMON_", "PHOENIX_")


@dataclass(slots=True)
class Posted:
    seconds: float
    retries_503: int = 0


def post_all(port: int, bodies: Sequence[bytes]) -> Posted:
    """POST every body on one keep-alive connection; waits and retries on 503 + Retry-After."""
    retries = 0
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    started = time.perf_counter()
    try:
        for body in bodies:
            while True:
                connection.request(
                    "POST", "/v1/traces", body=body, headers={"Content-Type": PROTOBUF}
                )
                response = connection.getresponse()
                response.read()
                if response.status == 200:
                    break
                if response.status != 503:
                    raise RuntimeError(f"POST /v1/traces answered {response.status}")
                retries += 1
                retry_after = response.getheader("Retry-After")
                try:
                    time.sleep(float(retry_after) if retry_after else DEFAULT_RETRY_AFTER)
                except ValueError:  # an HTTP date: not sent by these servers
                    time.sleep(DEFAULT_RETRY_AFTER)
                # Retry-After outlasts the server's keep-alive: its idle close is expected.
                connection.close()
                connection = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
        return Posted(time.perf_counter() - started, retries)
    finally:
        connection.close()


def _count(engine: Engine, table: str) -> int:
    try:
        with engine.connect() as connection:
            return int(connection.execute(text(f"SELECT count(*) FROM {table}")).scalar_one())
    except SQLAlchemyError:
        return -1  # not created yet, or locked for a moment


def wait_stored(server: Server, engine: Engine, table: str, expected: int) -> float:
    """Poll until ``table`` holds ``expected`` rows; returns ``time.perf_counter()`` then."""
    deadline = time.monotonic() + STORE_DEADLINE
    while True:
        count = _count(engine, table)
        if count >= expected:
            if count > expected:
                raise server.fail(f"{table} holds {count} rows, expected {expected}")
            return time.perf_counter()
        if not server.alive():
            raise server.fail(f"exited with {server.process.returncode}; {count} {table} stored")
        if time.monotonic() > deadline:
            raise server.fail(f"{count} of {expected} {table} stored after {STORE_DEADLINE:.0f}s")
        time.sleep(POLL_SECONDS)


@dataclass(frozen=True, slots=True)
class Run:
    """One measured run: end-to-end seconds, POST seconds, peak RSS, 503s seen."""

    seconds: float
    post_seconds: float
    peak_rss_mib: float
    retries_503: int
    # faithmon only: records stored with a status other than pending (evicted, say).
    not_pending: int = 0
    # CPU seconds the server's processes spent from the first POST until stored.
    cpu_seconds: float = 0.0

    def as_json(self) -> dict[str, float]:
        return {
            "seconds": self.seconds,
            "post_seconds": self.post_seconds,
            "peak_rss_mib": self.peak_rss_mib,
            "retries_503": self.retries_503,
            "not_pending": self.not_pending,
            "cpu_seconds": self.cpu_seconds,
        }


def measure(server: Server, payload: Payload, engine: Engine | None, table: str) -> Run:
    """POST the payload; the clock stops when ``table`` holds every item (or at the last 200)."""
    cpu = tree_cpu_seconds(server.process.pid)
    started = time.perf_counter()
    posted = post_all(server.port, payload.bodies)
    if engine is None:
        seconds = posted.seconds
    else:
        expected = payload.traces if table == "records" else payload.spans
        seconds = wait_stored(server, engine, table, expected) - started
    peak = tree_peak_rss_mib(server.process.pid)
    cpu = tree_cpu_seconds(server.process.pid) - cpu
    return Run(seconds, posted.seconds, peak, posted.retries_503, cpu_seconds=cpu)


def _tree(pid: int) -> list[int]:
    """A process and every process under it (Linux)."""
    found, pending = [], [pid]
    while pending:
        current = pending.pop()
        try:
            for task in Path(f"/proc/{current}/task").iterdir():
                children = (task / "children").read_text(encoding="utf-8").split()
                pending.extend(int(child) for child in children)
        except (FileNotFoundError, ProcessLookupError):
            continue  # ended meanwhile
        found.append(current)
    return found


def tree_peak_rss_mib(pid: int) -> float:
    """The VmHWM of a process and of every process under it, summed, in MiB.

    An upper bound: pages the worker processes share with the fork server that
    started them are counted in each.
    """
    total = 0.0
    for current in _tree(pid):
        try:
            status = Path(f"/proc/{current}/status").read_text(encoding="utf-8")
        except (FileNotFoundError, ProcessLookupError):
            continue
        for line in status.splitlines():
            if line.startswith("VmHWM:"):
                total += int(line.split()[1]) / 1024
    return total


def tree_cpu_seconds(pid: int) -> float:
    """User and system CPU seconds of a process and the processes under it, so far."""
    ticks = os.sysconf("SC_CLK_TCK")
    total = 0.0
    for current in _tree(pid):
        try:
            stat = Path(f"/proc/{current}/stat").read_text(encoding="utf-8")
        except (FileNotFoundError, ProcessLookupError):
            continue
        fields = stat.rsplit(")", 1)[1].split()
        total += (int(fields[11]) + int(fields[12])) / ticks  # utime, stime
    return total


def run_faithmon(
    payload: Payload, database_url: str, workdir: Path, tag: str, processes: str = "auto"
) -> Run:
    """One run of ``faithmon serve`` with FAITHMON_INGEST_PROCESSES=``processes``."""
    env = clean_env(
        STRIP,
        FAITHMON_DATABASE_URL=database_url,
        FAITHMON_SCRUB_KEY=SCRUB_KEY,
        FAITHMON_ASSEMBLY_QUIET_SECONDS=QUIET_SECONDS,
        FAITHMON_LOG_LEVEL="WARNING",
        FAITHMON_INGEST_PROCESSES=processes,
        FAITHMON_SPOOL_DIR=str(workdir / f"{tag}.spool"),
    )
    faithmon = [sys.executable, "-m", "faithmon"]
    upgrade = subprocess.run(
        [*faithmon, "db", "upgrade"], env=env, capture_output=True, text=True, check=False
    )
    if upgrade.returncode != 0:
        raise RuntimeError(f"faithmon db upgrade failed:\n{upgrade.stdout}{upgrade.stderr}")
    port = free_port()
    command = [*faithmon, "serve", "--port", str(port), "--grpc-port", "0"]
    engine = create_engine(database_url, poolclass=NullPool)
    try:
        with serve(f"faithmon serve ({tag})", command, env, port, workdir / f"{tag}.log") as server:
            run = measure(server, payload, engine, "records")
        # Every trace is whole, so every record should wait for the judge; an evicted
        # trace (too many in flight) would be stored as incomplete_evidence instead.
        with engine.connect() as connection:
            query = "SELECT count(*) FROM records WHERE status <> 'pending'"
            not_pending = int(connection.execute(text(query)).scalar_one())
        return replace(run, not_pending=not_pending)
    finally:
        engine.dispose()


BARE_SERVER = """
import sys

import uvicorn
from starlette.applications import Starlette
from starlette.responses import Response
from starlette.routing import Route


async def accept(request):
    await request.body()
    return Response(b"", media_type="application/x-protobuf")


async def healthz(request):
    return Response(b"ok")


app = Starlette(
    routes=[Route("/v1/traces", accept, methods=["POST"]), Route("/healthz", healthz)]
)
uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), log_level="warning")
"""


def run_bare(payload: Payload, workdir: Path) -> Run:
    """The baseline: a Starlette app under uvicorn, in its own process, that reads and answers."""
    port = free_port()
    env = clean_env(STRIP)
    command = [sys.executable, "-c", BARE_SERVER, str(port)]
    with serve("bare Starlette", command, env, port, workdir / "bare.log") as server:
        return measure(server, payload, None, "")
