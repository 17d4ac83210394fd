"""What a newcomer gets wrong is one line naming the cause, never a traceback: a database URL
that cannot be opened, a missing file, a bad port, a typo in a setting, a silent no-op."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from faithmon.cli import main

# The dialect is not the point here: PostgreSQL runs in the second_backend tier.
pytestmark = pytest.mark.one_backend

READ_ONLY = (
    ["traces", "list"],
    ["alerts", "list"],
    ["drift", "status"],
    ["report"],
    ["sample", "counts"],
    ["sentinel", "list"],
)


def one_line_error(result: Result) -> str:
    """The error's one line, after checking it is one line, not a traceback, exit non-zero."""
    assert result.exit_code not in (0, None), result.output
    assert "Traceback" not in result.output
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    return lines[0]


@pytest.mark.parametrize("command", READ_ONLY, ids=" ".join)
def test_a_read_only_command_refuses_a_missing_database(
    command: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Pointed at a SQLite file that does not exist, a command that reads creates nothing
    and says where it looked, as an absolute path."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("FAITHMON_DATABASE_URL", "sqlite:///relative/none.db")
    (tmp_path / "relative").mkdir()
    line = one_line_error(CliRunner().invoke(main, command))
    assert f"no faithmon database at {tmp_path / 'relative' / 'none.db'}" in line
    assert "faithmon db upgrade" in line and "FAITHMON_DATABASE_URL" in line
    assert not (tmp_path / "relative" / "none.db").exists()


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("sqlite:///no/such/folder/x.db", "does not exist"),
        ("not a url", "not a database URL"),
        ("mysql://user@127.0.0.1/db", "driver MySQLdb is not installed"),
        ("nosuchdb://user@127.0.0.1/db", "no database backend named 'nosuchdb'"),
    ],
)
def test_a_database_url_that_cannot_be_opened_is_one_line(
    url: str, expected: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("FAITHMON_DATABASE_URL", url)
    line = one_line_error(CliRunner().invoke(main, ["db", "upgrade"]))
    assert expected in line and line.startswith("Error: FAITHMON_DATABASE_URL="), line
    line = one_line_error(CliRunner().invoke(main, ["traces", "list"]))
    assert line.startswith("Error: FAITHMON_DATABASE_URL="), line


def test_a_refusing_postgresql_is_one_line_with_its_password_masked() -> None:
    """A server that refuses the connection (nothing listens on the port): the URL is shown
    without its password, the cause is the driver's first line, and what to check."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    url = f"postgresql+psycopg://faithmon:s3cret@127.0.0.1:{port}/x"
    result = CliRunner().invoke(main, ["alerts", "list", "--database-url", url])
    line = one_line_error(result)
    assert line.startswith("Error: --database-url=postgresql+psycopg://faithmon:***@")
    assert "s3cret" not in result.output and "refused" in line.lower()


def test_database_url_option_overrides_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAITHMON_DATABASE_URL", f"sqlite:///{tmp_path}/missing.db")
    given = f"sqlite:///{tmp_path}/given.db"
    runner = CliRunner()
    assert runner.invoke(main, ["db", "upgrade", "--database-url", given]).exit_code == 0
    listed = runner.invoke(main, ["alerts", "list", "--json", "--database-url", given])
    assert listed.exit_code == 0 and json.loads(listed.stdout) == []
    assert not (tmp_path / "missing.db").exists()


def test_unknown_settings_warn_and_strict_refuses(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAITHMON_DATABASE_URL", f"sqlite:///{tmp_path}/x.db")
    monkeypatch.setenv("FAITHMON_SAMPLE_RATIO", "0.5")
    runner = CliRunner()
    warned = runner.invoke(main, ["db", "upgrade"])
    assert warned.exit_code == 0
    assert "warning: FAITHMON_SAMPLE_RATIO is not a faithmon setting (did you mean " in (
        warned.stderr
    )
    line = one_line_error(runner.invoke(main, ["--strict", "db", "upgrade"]))
    assert "FAITHMON_SAMPLE_RATE" in line and "strict" in line
    monkeypatch.setenv("FAITHMON_STRICT", "1")
    assert "FAITHMON_SAMPLE_RATE" in one_line_error(runner.invoke(main, ["db", "upgrade"]))


def test_files_and_ports_a_person_gets_wrong(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("FAITHMON_DATABASE_URL", f"sqlite:///{tmp_path}/x.db")
    runner = CliRunner()
    assert runner.invoke(main, ["db", "upgrade"]).exit_code == 0
    line = one_line_error(runner.invoke(main, ["report", "-o", "nowhere/r.html"]))
    assert f"the folder {tmp_path / 'nowhere'} does not exist" in line
    # The old spelling still works, with the same check.
    assert "does not exist" in one_line_error(runner.invoke(main, ["report", "--out", "n/r"]))
    latin = tmp_path / "latin1.jsonl"
    latin.write_bytes('{"user_input": "caf\xe9"}\n'.encode("latin-1"))
    line = one_line_error(runner.invoke(main, ["score", str(latin)]))
    assert "not UTF-8 text (byte 0xe9 on line 1)" in line
    assert "99999 is not in the range" in one_line_error(
        runner.invoke(main, ["serve", "--port", "99999"])
    )
    assert "-1 is not in the range" in one_line_error(
        runner.invoke(main, ["traces", "list", "--limit", "-1"])
    )
    assert "0 is not in the range" in one_line_error(
        runner.invoke(main, ["demo", "--requests", "0"])
    )
    cases = tmp_path / "cases.jsonl"
    cases.write_text(json.dumps({"question": "q", "chunks": ["c"], "answer": "a"}) + "\n")
    line = one_line_error(runner.invoke(main, ["sentinel", "add", str(cases), "--name", "s"]))
    assert "line 1: the field `expected`" in line and "is missing" in line


def test_a_port_in_use_is_one_line_before_anything_claims_to_listen(tmp_path: Path) -> None:
    """The real process: no "receiving OTLP" line, no traceback, exit 1."""
    environment = {k: v for k, v in os.environ.items() if not k.startswith("FAITHMON_")}
    environment["FAITHMON_DATABASE_URL"] = f"sqlite:///{tmp_path}/x.db"
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = subprocess.run(
            [sys.executable, "-m", "faithmon", "serve", "--port", str(port), "--grpc-port", "0"],
            env=environment,
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert done.returncode == 1, done.stderr
    assert "receiving" not in done.stderr and "Traceback" not in done.stderr
    errors = [line for line in done.stderr.splitlines() if line.startswith("Error:")]
    assert errors == [
        f"Error: cannot listen on 127.0.0.1:{port}: Address already in use; choose another "
        "--port or stop what holds it"
    ]


def test_no_ops_speak(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A command that finds nothing to do says so, instead of printing nothing."""
    monkeypatch.setenv("FAITHMON_DATABASE_URL", f"sqlite:///{tmp_path}/x.db")
    monkeypatch.setenv("FAITHMON_WORKER_HEARTBEAT_FILE", str(tmp_path / "beat"))
    runner = CliRunner()
    assert runner.invoke(main, ["db", "upgrade"]).exit_code == 0
    line = one_line_error(runner.invoke(main, ["sentinel", "run", "--name", "nosuch"]))
    assert "no sentinel set named 'nosuch'" in line
    status = runner.invoke(main, ["judge", "status"])
    assert status.exit_code == 0 and "no judge configuration is blocked" in status.stdout
    unhealthy = runner.invoke(main, ["worker", "--check"])
    assert unhealthy.exit_code == 1 and "no worker heartbeat in" in unhealthy.stdout
    assert runner.invoke(main, ["worker", "--once"]).exit_code == 0
    healthy = runner.invoke(main, ["worker", "--check", "--json"])
    assert healthy.exit_code == 0 and json.loads(healthy.stdout)["healthy"] is True
    assert "no alerts" in runner.invoke(main, ["alerts", "list"]).stdout


def test_a_reader_that_leaves_early_is_not_an_error(tmp_path: Path) -> None:
    """`faithmon ... | head`: the closed pipe ends the command quietly."""
    environment = {k: v for k, v in os.environ.items() if not k.startswith("FAITHMON_")}
    environment["FAITHMON_DATABASE_URL"] = f"sqlite:///{tmp_path}/x.db"
    command = [sys.executable, "-m", "faithmon"]
    subprocess.run([*command, "db", "upgrade"], env=environment, check=True, capture_output=True)
    done = subprocess.run(
        f"{' '.join(command)} keys generate --help | head -c 1",
        shell=True,
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0 and "Traceback" not in done.stderr and "Error" not in done.stderr


def test_the_demo_never_touches_a_foreign_database(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """FAITHMON_DATABASE_URL is the user's store: the demo writes into its own file, and a
    database given with --database that holds another service's records is refused."""
    from sqlalchemy import create_engine, text

    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    theirs = tmp_path / "theirs.db"
    assert (
        runner.invoke(main, ["demo", "--requests", "40", "--database", str(theirs)]).exit_code == 0
    )
    engine = create_engine(f"sqlite:///{theirs}")
    with engine.begin() as connection:
        connection.execute(
            text("UPDATE records SET labels = json_set(labels, '$.service', 'shop')")
        )
        before = connection.execute(text("SELECT count(*), max(id) FROM records")).one()
    engine.dispose()
    modified = theirs.stat().st_mtime_ns
    monkeypatch.setenv("FAITHMON_DATABASE_URL", f"sqlite:///{theirs}")
    ran = runner.invoke(main, ["demo", "--requests", "40"])
    assert ran.exit_code == 0, ran.output
    assert "sqlite:///faithmon-demo.db" in ran.stdout and (tmp_path / "faithmon-demo.db").exists()
    line = one_line_error(
        runner.invoke(main, ["demo", "--requests", "40", "--database", str(theirs)])
    )
    assert "holds records the demo did not write" in line
    assert theirs.stat().st_mtime_ns == modified
    engine = create_engine(f"sqlite:///{theirs}")
    with engine.connect() as connection:
        assert connection.execute(text("SELECT count(*), max(id) FROM records")).one() == before
    engine.dispose()
    # Its own file again: an earlier demo's records are replaced, not added to.
    again = runner.invoke(main, ["demo", "--requests", "40"])
    assert again.exit_code == 0, again.output
    engine = create_engine(f"sqlite:///{tmp_path / 'faithmon-demo.db'}")
    with engine.connect() as connection:
        assert connection.execute(text("SELECT count(*) FROM records")).scalar() == 40
    engine.dispose()


@pytest.mark.postgres
def test_the_demo_starts_its_own_earlier_postgresql_database_again(postgres_url: str) -> None:
    """`--help` says the database must be empty or an earlier demo's: on PostgreSQL, where
    there is no file to make anew, an earlier demo's records are replaced, not added to."""
    from sqlalchemy import create_engine, text

    runner = CliRunner()
    for _ in range(2):
        ran = runner.invoke(main, ["demo", "--requests", "40", "--database", postgres_url])
        assert ran.exit_code == 0, ran.output
    engine = create_engine(postgres_url)
    with engine.connect() as connection:
        assert connection.execute(text("SELECT count(*) FROM records")).scalar() == 40
    engine.dispose()
