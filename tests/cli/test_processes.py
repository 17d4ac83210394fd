"""The long-running commands as an operator sees them in a terminal: `faithmon worker` logs
what its jobs did without the scheduler's chatter, `faithmon serve` says where its
dashboard is, and Ctrl-C (SIGINT) ends either cleanly: exit 0, no traceback."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from faithmon.cli import wiring
from faithmon.config import Settings
from faithmon.model import Chunk, RagRecord
from faithmon.store import records as store_records
from tests.timing import days_ago, wait_for

CONTEXT = "Order A17 shipped on 3 March by courier."


@pytest.fixture
def started() -> Iterator[list[subprocess.Popen[str]]]:
    """Processes a test starts: killed (if still running) and reaped after it."""
    processes: list[subprocess.Popen[str]] = []
    yield processes
    for process in processes:
        if process.poll() is None:
            process.kill()
        process.communicate()


def _start(
    started: list[subprocess.Popen[str]], tmp_path: Path, *args: str, **env: str
) -> subprocess.Popen[str]:
    process = subprocess.Popen(
        [sys.executable, "-m", "faithmon", *args],
        env={**os.environ, "FAITHMON_DATA_DIR": str(tmp_path / "data"), **env},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    started.append(process)
    return process


def _interrupted(process: subprocess.Popen[str]) -> str:
    """Send Ctrl-C's signal; the process must end by itself, cleanly. Its stderr."""
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 0, stderr
    assert "Traceback" not in stderr and "KeyboardInterrupt" not in stderr, stderr
    return stderr


def test_the_worker_says_what_its_jobs_did_and_stops_on_ctrl_c(
    tmp_path: Path, started: list[subprocess.Popen[str]]
) -> None:
    """Three records scored: the log says so and what drift found, with no APScheduler
    line; SIGINT stops the schedule and the process exits 0."""
    url = f"sqlite:///{tmp_path}/worker.db"
    settings = Settings.from_env({}, database_url=url)
    made = [
        RagRecord(
            trace_id=f"{n + 1:032x}",
            question="Where is order A17?",
            answer=CONTEXT,
            chunks=(Chunk(0, CONTEXT),),
            labels={"model": "m1"},
            started_at=days_ago(1),
        )
        for n in range(3)
    ]
    with wiring.open_store(settings) as sessions, sessions.begin() as session:
        store_records.save_records(session, made)
    process = _start(
        started,
        tmp_path,
        "worker",
        FAITHMON_DATABASE_URL=url,
        FAITHMON_SCRUB_KEY="worker-signals-test-0123",
        FAITHMON_WORKER_SCORE_INTERVAL="0.2",
        FAITHMON_SENTINEL_INTERVAL="0",
    )

    def all_scored() -> bool:
        assert process.poll() is None, "the worker exited early"
        with wiring.open_store(settings, upgrade=False) as sessions, sessions() as session:
            return store_records.counts_by_status(session) == {"scored": 3}

    wait_for(all_scored, 60, "the worker to score 3 records", 0.1)
    stderr = _interrupted(process)
    assert "apscheduler" not in stderr
    assert re.search(r"faithmon: settled 3 records with offline/", stderr), stderr
    assert "faithmon: drift: no frozen baseline yet; 0 alert changes" in stderr
    assert "faithmon: worker stopping on signal 2" in stderr
    assert stderr.rstrip().endswith("faithmon: worker stopped")


def test_serve_says_where_its_dashboard_is_and_stops_on_ctrl_c(
    tmp_path: Path, started: list[subprocess.Popen[str]]
) -> None:
    """`faithmon serve` on any free port prints its dashboard's address; SIGINT drains and
    ends it with exit 0."""
    process = _start(
        started,
        tmp_path,
        "serve",
        "--port",
        "0",
        "--grpc-port",
        "0",
        FAITHMON_SCRUB_KEY="serve-signals-test-0123",
    )
    assert process.stderr is not None
    lines: list[str] = []
    # readline blocks until serve writes; a serve that dies ends it with "".
    while not any("the dashboard is at" in line for line in lines):
        line = process.stderr.readline()
        assert line, f"serve ended before saying where its dashboard is: {''.join(lines)}"
        lines.append(line)
    said = next(line for line in lines if "the dashboard is at" in line)
    address = re.fullmatch(
        r"faithmon: the dashboard is at (http://127\.0\.0\.1:\d+)/ and the API at "
        r"\1/api/v1\n",
        said,
    )
    assert address is not None, said

    def answers() -> bool:
        assert process.poll() is None, "serve exited early"
        try:
            with urllib.request.urlopen(f"{address[1]}/healthz", timeout=2) as response:
                return response.status == 200
        except OSError:
            return False

    # Ctrl-C is the server's to handle once it answers (before, it is click's "Aborted!").
    wait_for(answers, 60, "serve to answer /healthz")
    _interrupted(process)
