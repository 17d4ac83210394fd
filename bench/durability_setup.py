"""What both durability runs share: their sizes, the receiver's environment and
command, and the watch on the stored records and the spool."""

from __future__ import annotations

import re
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from common import SCRUB_KEY
from loopback import clean_env
from sqlalchemy import Engine, text
from sqlalchemy.exc import SQLAlchemyError

ANSWER = "Order A17 shipped on 3 March."
QUIET_SECONDS = "0.2"
POLL_SECONDS = 0.25
# The stored count must hold still this long before it counts as final.
STABLE_SECONDS = 5.0
STORE_DEADLINE = 240.0


@dataclass(frozen=True, slots=True)
class Sizes:
    traces: int
    rate: float  # traces per second from the app
    cut_at: float  # seconds after the app's first trace
    outage: float
    load_seconds: float  # before the SIGKILL


FULL = Sizes(traces=3000, rate=50, cut_at=15, outage=30, load_seconds=5)
QUICK = Sizes(traces=1000, rate=50, cut_at=5, outage=10, load_seconds=2)


def server_env(database_url: str, spool_dir: str) -> dict[str, str]:
    return clean_env(
        ("FAITHMON_",),
        FAITHMON_DATABASE_URL=database_url,
        FAITHMON_SCRUB_KEY=SCRUB_KEY,
        FAITHMON_ASSEMBLY_QUIET_SECONDS=QUIET_SECONDS,
        FAITHMON_SPOOL_DIR=spool_dir,
        FAITHMON_LOG_LEVEL="INFO",
    )


def upgrade(database_url: str) -> None:
    env = server_env(database_url, "")
    done = subprocess.run(
        [sys.executable, "-m", "faithmon", "db", "upgrade"],
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    if done.returncode != 0:
        raise RuntimeError(f"faithmon db upgrade failed:\n{done.stdout}{done.stderr}")


def serve_command(port: int) -> list[str]:
    return [sys.executable, "-m", "faithmon", "serve", "--port", str(port), "--grpc-port", "0"]


def counts(engine: Engine) -> tuple[int, int]:
    """(rows, distinct trace ids) in records; (-1, -1) if the database does not answer."""
    try:
        with engine.connect() as connection:
            row = connection.execute(
                text("SELECT count(*), count(DISTINCT trace_id) FROM records")
            ).one()
    except SQLAlchemyError:
        return -1, -1
    return int(row[0]), int(row[1])


def stored_ids(engine: Engine) -> set[str]:
    with engine.connect() as connection:
        return {
            str(i).lower()
            for i in connection.execute(text("SELECT trace_id FROM records")).scalars()
        }


def spool_bytes(folder: Path) -> int:
    try:
        return sum(p.stat().st_size for p in folder.glob("*.spool"))
    except OSError:  # a segment deleted while we looked
        return -1


class Watch:
    """Samples (seconds, stored rows, spool bytes) every POLL_SECONDS in a thread."""

    def __init__(self, engine: Engine, spool: Path | None) -> None:
        self._engine = engine
        self._spool = spool
        self.started = time.perf_counter()
        self.samples: list[tuple[float, int, int]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while True:
            rows = counts(self._engine)[0]
            size = spool_bytes(self._spool) if self._spool else 0
            self.samples.append((time.perf_counter() - self.started, rows, size))
            if self._stop.wait(POLL_SECONDS):
                return

    def now(self) -> float:
        return time.perf_counter() - self.started

    def rows_at(self, seconds: float) -> int:
        before = [rows for t, rows, _ in self.samples if t <= seconds]
        return before[-1] if before else 0

    def last_growth(self) -> float:
        """When the stored count last grew."""
        last, previous = 0.0, None
        for t, rows, _ in self.samples:
            if rows < 0:  # the database did not answer this poll
                continue
            if previous is not None and rows > previous:
                last = t
            previous = rows
        return last

    def wait_stable(self, until: Callable[[int], bool], deadline: float) -> int:
        """Wait until ``until(rows)`` holds, or rows hold still STABLE_SECONDS; returns rows."""
        end = time.monotonic() + deadline
        while time.monotonic() < end:
            time.sleep(POLL_SECONDS)
            if not self.samples:
                continue
            rows = self.samples[-1][1]
            recent = [r for t, r, _ in self.samples if t >= self.now() - STABLE_SECONDS]
            if until(rows) or (self.now() > STABLE_SECONDS and len(set(recent)) == 1):
                return rows
        return self.samples[-1][1]

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()


def log_summary(log: Path) -> dict[str, Any]:
    """Warning and error lines of a server log, digits folded so like lines count together."""
    lines = log.read_text(encoding="utf-8", errors="replace").splitlines()
    kinds = Counter(
        re.sub(r"\d+", "N", line)
        for line in lines
        if "WARNING" in line or "ERROR" in line or "Traceback" in line
    )
    return {
        # "draining ...; answering 503 until saved" at the SIGTERM is not an answer
        "answering_503": sum("faithmon: answering 503:" in line for line in lines),
        "replayed": [line for line in lines if "replayed" in line],
        "warnings": dict(kinds.most_common(12)),
    }
