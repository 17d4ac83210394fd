"""State in one place: the data dir holds what faithmon writes, whatever folder a command
starts in, and the store's fingerprint of the scrub key refuses a worker with another key
(receivers as processes: ``tests/e2e/test_state.py``)."""

from __future__ import annotations

import hashlib
import os
import socket
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from sqlalchemy import select

from faithmon.cli import main
from faithmon.store import engine as store_engine
from faithmon.store.tables import FingerprintRow

KEY_A = "first-scrub-key-0123456789"
KEY_B = "other-scrub-key-0123456789"
QUIET = {"FAITHMON_SENTINEL_INTERVAL": "0"}  # sentinel runs are not the point here


def invoke(*args: str, **env: str) -> Result:
    return CliRunner().invoke(main, list(args), env={**QUIET, **env})


def refusal(result: Result) -> str:
    """The one error line of a command that refused, after checking it is one line."""
    assert result.exit_code == 1, result.output
    assert "Traceback" not in result.output
    errors = [line for line in result.stderr.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1, result.stderr
    return errors[0]


def stored_fingerprint(url: str) -> str:
    engine = store_engine.make_engine(url)
    try:
        with engine.connect() as connection:
            return connection.execute(select(FingerprintRow.fingerprint)).scalar_one()
    finally:
        engine.dispose()


def test_a_worker_with_another_key_refuses_to_start(database_url: str) -> None:
    """The first worker records its key's fingerprint; one with another key stops with one
    line naming FAITHMON_SCRUB_KEY and the process that recorded the first, and when."""
    first = invoke("worker", "--once", FAITHMON_DATABASE_URL=database_url, FAITHMON_SCRUB_KEY=KEY_A)
    assert first.exit_code == 0, first.output
    other = invoke("worker", "--once", FAITHMON_DATABASE_URL=database_url, FAITHMON_SCRUB_KEY=KEY_B)
    line = refusal(other)
    assert line.startswith("Error: FAITHMON_SCRUB_KEY is not the scrub key this database's")
    recorder = f"faithmon worker on {socket.gethostname()} (pid {os.getpid()}, key from "
    assert f"recorded by {recorder}FAITHMON_SCRUB_KEY) at 20" in line
    assert "FAITHMON_SCRUB_KEY_FILE" in line and KEY_A not in line and KEY_B not in line
    again = invoke("worker", "--once", FAITHMON_DATABASE_URL=database_url, FAITHMON_SCRUB_KEY=KEY_A)
    assert again.exit_code == 0, again.output


def test_the_fingerprint_is_neither_the_key_nor_a_plain_hash_of_it(tmp_path: Path) -> None:
    """What the store keeps tells keys apart without holding the key or an unkeyed hash of
    it (which a lookup table would reverse for a weak key)."""
    data = tmp_path / "data"
    assert invoke("worker", "--once", FAITHMON_DATA_DIR=str(data)).exit_code == 0
    key = (data / "faithmon-scrub.key").read_bytes().strip()
    stored = stored_fingerprint(f"sqlite:///{data}/faithmon.db")
    assert key.decode() not in stored and stored not in key.decode()
    for form in (key, key + b"\n"):
        for name in sorted(hashlib.algorithms_guaranteed - {"shake_128", "shake_256"}):
            assert stored != hashlib.new(name, form).hexdigest(), name
    other = tmp_path / "other"
    assert invoke("worker", "--once", FAITHMON_DATA_DIR=str(other)).exit_code == 0
    assert stored_fingerprint(f"sqlite:///{other}/faithmon.db") != stored


def test_the_data_dir_holds_what_faithmon_writes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`faithmon --data-dir` (or FAITHMON_DATA_DIR) holds the database, the scrub key and the
    heartbeat, made 0700; the folder a command starts in gets nothing, and a command started
    elsewhere with the same data dir finds the same state."""
    here, there = tmp_path / "here", tmp_path / "there"
    here.mkdir()
    there.mkdir()
    monkeypatch.chdir(here)
    assert invoke("--data-dir", "../state", "worker", "--once").exit_code == 0
    state = tmp_path / "state"
    assert state.stat().st_mode & 0o777 == 0o700
    assert {p.name for p in state.iterdir()} >= {
        "faithmon.db",
        "faithmon-scrub.key",
        "faithmon-worker.heartbeat",
    }
    assert (state / "faithmon-scrub.key").stat().st_mode & 0o777 == 0o600
    assert list(here.iterdir()) == []
    key = (state / "faithmon-scrub.key").read_bytes()
    monkeypatch.chdir(there)
    checked = invoke("worker", "--check", FAITHMON_DATA_DIR=str(state))
    assert checked.exit_code == 0, checked.output
    assert invoke("worker", "--once", FAITHMON_DATA_DIR=str(state)).exit_code == 0
    assert (state / "faithmon-scrub.key").read_bytes() == key
    assert list(there.iterdir()) == []


def test_files_an_earlier_faithmon_left_in_the_working_directory_are_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The database and scrub key an earlier version kept in the working directory are used,
    each with a one-line warning saying where to move it, and no second key is made."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("FAITHMON_DATA_DIR")
    (tmp_path / "faithmon-scrub.key").write_text(KEY_A + "\n")
    made = invoke("db", "upgrade", FAITHMON_DATABASE_URL="sqlite:///faithmon.db")
    assert made.exit_code == 0, made.output
    result = invoke("worker", "--once")
    assert result.exit_code == 0, result.output
    warnings = [line for line in result.stderr.splitlines() if line.startswith("warning:")]
    data = tmp_path / "faithmon-data"
    assert len(warnings) == 2, result.stderr
    for name, warning in zip(("faithmon.db", "faithmon-scrub.key"), warnings, strict=True):
        assert warning.startswith(f"warning: using {tmp_path / name} from the working directory")
        assert f"move it into {data}" in warning
    assert not (data / "faithmon-scrub.key").exists() and not (data / "faithmon.db").exists()
    same = invoke("worker", "--once", FAITHMON_DATABASE_URL="sqlite:///faithmon.db")
    assert same.exit_code == 0, same.output  # the old file's key was the one recorded
    other = invoke(
        "worker", "--once", FAITHMON_DATABASE_URL="sqlite:///faithmon.db", FAITHMON_SCRUB_KEY=KEY_B
    )
    assert "is not the scrub key" in refusal(other)


def test_a_rotated_key_is_recorded_and_the_old_one_refused(database_url: str) -> None:
    """`faithmon db rotate-scrub-key` records the key it is given in place of the first:
    processes with the new key start, those with the old one refuse."""
    store = {"FAITHMON_DATABASE_URL": database_url}
    assert invoke("worker", "--once", **store, FAITHMON_SCRUB_KEY=KEY_A).exit_code == 0
    rotated = invoke("db", "rotate-scrub-key", **store, FAITHMON_SCRUB_KEY=KEY_B)
    assert rotated.exit_code == 0, rotated.output
    assert rotated.stdout.startswith("recorded the fingerprint of FAITHMON_SCRUB_KEY as the")
    assert "in place of the one faithmon worker on" in rotated.stdout
    assert invoke("worker", "--once", **store, FAITHMON_SCRUB_KEY=KEY_B).exit_code == 0
    old = refusal(invoke("worker", "--once", **store, FAITHMON_SCRUB_KEY=KEY_A))
    assert "recorded by faithmon db rotate-scrub-key on" in old
