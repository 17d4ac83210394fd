"""Arize Phoenix, the ingest bench's peer: ``phoenix serve`` on SQLite, fed the same
bodies as faithmon, timed until its ``spans`` table holds every span.

The bench never installs Phoenix; it uses ``/tmp/phoenix-venv/bin/phoenix`` if that
exists, or the path given with ``--phoenix``.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from ingest_payload import Payload
from ingest_runs import STRIP, Run, measure
from loopback import clean_env, free_port, serve
from sqlalchemy import create_engine
from sqlalchemy.pool import NullPool

DEFAULT_PHOENIX = Path("/tmp/phoenix-venv/bin/phoenix")


def run_phoenix(payload: Payload, phoenix: Path, workdir: Path, tag: str) -> Run:
    home = workdir / tag
    home.mkdir()
    port = free_port()
    env = clean_env(
        STRIP,
        PHOENIX_WORKING_DIR=str(home),
        PHOENIX_HOST="127.0.0.1",
        PHOENIX_PORT=str(port),
        PHOENIX_GRPC_PORT=str(free_port()),
        PHOENIX_TELEMETRY_ENABLED="false",
        PHOENIX_LOGGING_LEVEL="warning",
        PHOENIX_DB_LOGGING_LEVEL="warning",
    )
    engine = create_engine(f"sqlite:///{home / 'phoenix.db'}", poolclass=NullPool)
    try:
        with serve(
            f"phoenix serve ({tag})",
            [str(phoenix), "serve"],
            env,
            port,
            home / "serve.log",
            cwd=home,
        ) as server:
            return measure(server, payload, engine, "spans")
    finally:
        engine.dispose()


def phoenix_path(option: str | None) -> tuple[Path | None, str]:
    """The ``phoenix`` command to run, or None and why Phoenix is skipped."""
    if option == "":
        return None, "--phoenix '' given"
    path = Path(option) if option else DEFAULT_PHOENIX
    if path.is_file() and os.access(path, os.X_OK):
        return path, ""
    if option:
        raise SystemExit(f"--phoenix {option}: not an executable file")
    return None, f"{DEFAULT_PHOENIX} not found (pip install arize-phoenix into /tmp/phoenix-venv)"


def phoenix_version(phoenix: Path) -> str:
    """arize-phoenix's version, asked of the Python beside ``phoenix``."""
    python = phoenix.parent / "python"
    probe = subprocess.run(
        [str(python), "-c", "import importlib.metadata as m; print(m.version('arize-phoenix'))"],
        capture_output=True,
        text=True,
        check=False,
    )
    return probe.stdout.strip() or "unknown"
