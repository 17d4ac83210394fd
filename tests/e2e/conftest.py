"""Fixtures for end-to-end tests: a real `faithmon serve` process on loopback."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.helpers import faithmon, free_port, wait_until_healthy


@pytest.fixture
def env(database_url: str, tmp_path: Path) -> dict[str, str]:
    return {
        **os.environ,
        "FAITHMON_DATABASE_URL": database_url,
        "FAITHMON_SPOOL_DIR": str(tmp_path / "spool"),
        "FAITHMON_SCRUB_KEY": "e2e-test-key-0123456789",
        "FAITHMON_ASSEMBLY_QUIET_SECONDS": "0.2",
        "FAITHMON_DRIFT_DIMENSIONS": "route,model",
        "FAITHMON_DRIFT_BASELINE_RECORDS": "20",
        "FAITHMON_DRIFT_BASELINE_DAYS": "0",
        "FAITHMON_DRIFT_SEGMENT_MIN_BASELINE": "5",
        # The traffic spans seconds: a threshold sized from a budget per 30 days would
        # wait for far more evidence, so the tests pin one, as the demo does.
        "FAITHMON_DRIFT_THRESHOLD": "15",
    }


@pytest.fixture
def grpc_port() -> int:
    """The port `faithmon serve` receives OTLP/gRPC on."""
    return free_port()


@pytest.fixture
def server(env: dict[str, str], grpc_port: int) -> Iterator[tuple[str, subprocess.Popen[str]]]:
    faithmon(env, "db", "upgrade")
    port = free_port()
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "faithmon",
            "serve",
            "--port",
            str(port),
            "--grpc-port",
            str(grpc_port),
        ],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until_healthy(url, process)
        yield url, process
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()


@pytest.fixture
def servers() -> Iterator[list[subprocess.Popen[str]]]:
    """Processes a test starts: killed (if still running) and reaped after it."""
    started: list[subprocess.Popen[str]] = []
    yield started
    for process in started:
        if process.poll() is None:
            process.kill()
        process.communicate()
