"""State in one place, with real `faithmon serve` processes: receivers started in different
folders with one data dir share its scrub key, each needs a spool of its own, and one with
another key than the store recorded refuses to start, or, when it meets the store only
after starting, stores nothing until restarted with the right key."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from sqlalchemy import func, make_url, select

from faithmon.store import engine as store_engine
from faithmon.store.tables import ReceiverRow, RecordRow
from tests.e2e.helpers import faithmon, free_port, wait_until_healthy
from tests.e2e.otlp import Traces, post
from tests.e2e.proxy import CuttableProxy
from tests.timing import wait_for

EMAIL = "jane.roe@example.com"
QUESTION = f"Where is the order of {EMAIL}?"
KEY_A = "first-scrub-key-0123456789"
KEY_B = "other-scrub-key-0123456789"


def serve(port: int, *args: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "faithmon",
        "serve",
        "--port",
        str(port),
        "--grpc-port",
        "0",
        *args,
    ]


def start(env: dict[str, str], cwd: Path, *args: str) -> tuple[str, subprocess.Popen[str]]:
    port = free_port()
    process = subprocess.Popen(
        serve(port, *args),
        env=env,
        cwd=cwd,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    url = f"http://127.0.0.1:{port}"
    wait_until_healthy(url, process)
    return url, process


def refused(env: dict[str, str], cwd: Path, *args: str) -> str:
    """The one error line of a `faithmon serve` that must refuse to start."""
    done = subprocess.run(
        serve(free_port(), *args),
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 1, done.stderr
    assert "receiving OTLP" not in done.stderr and "Traceback" not in done.stderr
    errors = [line for line in done.stderr.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1, done.stderr
    return errors[0]


def stop(process: subprocess.Popen[str]) -> str:
    process.send_signal(signal.SIGTERM)
    return process.communicate(timeout=60)[1]


@pytest.fixture
def folders(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A data dir, and two other folders to start processes in."""
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    return tmp_path / "data", a, b


def questions(url: str) -> list[str]:
    engine = store_engine.make_engine(url)
    try:
        with engine.connect() as connection:
            return list(connection.execute(select(RecordRow.question)).scalars())
    finally:
        engine.dispose()


def test_receivers_started_in_two_folders_share_one_scrub_key(
    folders: tuple[Path, Path, Path], servers: list[subprocess.Popen[str]]
) -> None:
    """Two receivers with one FAITHMON_DATA_DIR, started from two folders and no
    FAITHMON_SCRUB_KEY, give one e-mail one pseudonym: they share the data dir's generated
    key and database, and leave nothing in the folders they started in."""
    data, a, b = folders
    env = {
        **os.environ,
        "FAITHMON_DATA_DIR": str(data),
        "FAITHMON_SCRUB_SCOPE": "global",  # one pseudonym across records, not per record
        "FAITHMON_ASSEMBLY_QUIET_SECONDS": "0.2",
    }
    traces = Traces()
    for n, folder in enumerate((a, b)):
        url, process = start(env, folder)
        servers.append(process)
        assert post(url, traces.body(n, QUESTION)[1]) == 200
        stop(process)  # saves what it buffers; the next one may take the data dir's spool
    stored = questions(f"sqlite:///{data}/faithmon.db")
    assert len(stored) == 2 and EMAIL not in " ".join(stored)
    pseudonyms = {found for q in stored for found in re.findall(r"<EMAIL_[0-9a-f]+>", q)}
    assert len(pseudonyms) == 1, stored
    assert list(a.iterdir()) == [] and list(b.iterdir()) == []


def test_a_second_receiver_needs_a_spool_dir_of_its_own(
    folders: tuple[Path, Path, Path], servers: list[subprocess.Popen[str]]
) -> None:
    """A second receiver on the data dir's spool refuses with one line naming both
    FAITHMON_SPOOL_DIR and `serve --spool-dir`; with --spool-dir (read from the folder it
    starts in) it runs beside the first."""
    data, a, b = folders
    env = {**os.environ, "FAITHMON_DATA_DIR": str(data), "FAITHMON_SCRUB_KEY": KEY_A}
    _, first = start(env, a)
    servers.append(first)
    line = refused(env, b)
    assert f"{data / 'faithmon-spool'} is in use by another receiver" in line
    assert "FAITHMON_SPOOL_DIR" in line and "--spool-dir" in line
    url, second = start(env, b, "--spool-dir", "spool-b")
    servers.append(second)
    assert post(url, Traces().body(1)[1]) == 200
    assert (b / "spool-b" / "LOCK").is_file()


def test_a_receiver_with_another_key_refuses_to_start(folders: tuple[Path, Path, Path]) -> None:
    """Once a worker recorded its key in the store, a receiver with another key stops with
    one line naming FAITHMON_SCRUB_KEY and that worker, before it listens."""
    data, _, b = folders
    env = {**os.environ, "FAITHMON_DATA_DIR": str(data), "FAITHMON_SENTINEL_INTERVAL": "0"}
    faithmon({**env, "FAITHMON_SCRUB_KEY": KEY_A}, "worker", "--once")
    line = refused({**env, "FAITHMON_SCRUB_KEY": KEY_B}, b)
    assert line.startswith("Error: FAITHMON_SCRUB_KEY is not the scrub key")
    assert f"recorded by faithmon worker on {socket.gethostname()} (pid " in line
    assert KEY_A not in line and KEY_B not in line


def receiver_error(url: str) -> str:
    """The last failure the receivers' heartbeat rows report ('' for none yet)."""
    engine = store_engine.make_engine(url)
    try:
        with engine.connect() as connection:
            errors = connection.execute(select(ReceiverRow.last_error)).scalars().all()
    finally:
        engine.dispose()
    return errors[0] if errors else ""


def stored(url: str) -> int:
    engine = store_engine.make_engine(url)
    try:
        with engine.connect() as connection:
            return connection.execute(select(func.count()).select_from(RecordRow)).scalar_one()
    finally:
        engine.dispose()


@pytest.mark.postgres
def test_a_receiver_that_meets_another_key_once_the_database_answers_stores_nothing(
    postgres_url: str, tmp_path: Path, servers: list[subprocess.Popen[str]]
) -> None:
    """A receiver started while the database is down checks its key before its first
    write: with another key it logs one error naming FAITHMON_SCRUB_KEY and stores nothing;
    its spool keeps the export, which a restart with the recorded key stores."""
    base = {
        **os.environ,
        "FAITHMON_DATABASE_URL": postgres_url,
        "FAITHMON_SENTINEL_INTERVAL": "0",
        "FAITHMON_ASSEMBLY_QUIET_SECONDS": "0.2",
        "FAITHMON_SPOOL_DIR": str(tmp_path / "spool"),
        "FAITHMON_AUTH": "off",  # no API keys can be read while the database is down
        "FAITHMON_ALERT_RECEIVER_STALE": "2",  # a heartbeat every half second
    }
    faithmon({**base, "FAITHMON_SCRUB_KEY": KEY_A}, "worker", "--once")
    target = make_url(postgres_url)
    with CuttableProxy(target.host or "127.0.0.1", target.port or 5432) as proxy:
        proxied = target.set(port=proxy.port).render_as_string(hide_password=False)
        env = {
            **base,
            "FAITHMON_DATABASE_URL": proxied,
            "FAITHMON_DB_CONNECT_TIMEOUT": "2",
            "FAITHMON_SCRUB_KEY": KEY_B,
        }
        proxy.cut()
        url, process = start(env, tmp_path)
        servers.append(process)
        assert post(url, Traces().body(1, QUESTION)[1]) == 200
        proxy.restore()
        wait_for(
            lambda: receiver_error(postgres_url) == "ScrubKeyMismatch",
            60,
            "the receiver to report the other key",
        )
        assert stored(postgres_url) == 0
        log = stop(process)
    errors = [line for line in log.splitlines() if " ERROR " in line]
    assert len(errors) == 1, log
    assert "FAITHMON_SCRUB_KEY is not the scrub key" in errors[0]
    assert "recorded by faithmon worker on" in errors[0] and "nothing is stored" in errors[0]
    assert EMAIL not in log and KEY_A not in log and KEY_B not in log
    _, again = start({**base, "FAITHMON_SCRUB_KEY": KEY_A}, tmp_path)
    servers.append(again)
    wait_for(lambda: stored(postgres_url) == 1, 60, "the spooled export stored")
