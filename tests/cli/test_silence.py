"""`faithmon silence`: add with --json, list active and pending with a header, expire (twice
is a clear no-op); a bad matcher, duration or id is one line, never a traceback."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest
from click.testing import CliRunner

from faithmon.cli import main

# The dialect is not the point here: PostgreSQL runs in the second_backend tier.
pytestmark = pytest.mark.one_backend


@pytest.fixture
def runner(database_url: str, monkeypatch: pytest.MonkeyPatch) -> CliRunner:
    monkeypatch.setenv("FAITHMON_DATABASE_URL", database_url)
    return CliRunner()


def _add(runner: CliRunner, *args: str) -> dict[str, object]:
    result = runner.invoke(main, ["silence", "add", *args, "--json"])
    assert result.exit_code == 0, result.output
    shown: dict[str, object] = json.loads(result.stdout)
    return shown


def test_add_list_expire(runner: CliRunner) -> None:
    made = _add(
        runner,
        *("--match", "model=gpt-4o", "--match", "route!=health", "--duration", "2h"),
        *("--comment", "rolling back gpt-4o", "--by", "alice"),
    )
    assert isinstance(made["id"], int) and made["state"] == "active"
    assert made["matchers"] == ["model=gpt-4o", "route!=health"]
    assert made["created_by"] == "alice" and made["comment"] == "rolling back gpt-4o"
    starts = datetime.fromisoformat(str(made["starts_at"]))
    assert datetime.fromisoformat(str(made["ends_at"])) - starts == timedelta(hours=2)
    later = (datetime.now(UTC) + timedelta(days=1)).isoformat()
    pending = _add(
        runner,
        *("--match", "tenant=~acme|globex", "--duration", "30m", "--comment", "window"),
        *("--starts-at", later),
    )
    assert pending["state"] == "pending"

    listed = runner.invoke(main, ["silence", "list"])
    assert listed.exit_code == 0, listed.output
    lines = listed.stdout.splitlines()
    assert lines[0].split()[:3] == ["id", "state", "starts"]
    assert f"#{pending['id']}" in lines[1] and "pending" in lines[1]
    assert f"#{made['id']}" in lines[2] and "model=gpt-4o,route!=health" in lines[2]
    as_json = json.loads(runner.invoke(main, ["silence", "list", "--json", "--limit", "1"]).stdout)
    assert [s["id"] for s in as_json] == [pending["id"]]

    expired = runner.invoke(main, ["silence", "expire", str(made["id"])])
    assert expired.exit_code == 0 and f"silence #{made['id']} expired" in expired.stdout
    again = runner.invoke(main, ["silence", "expire", str(made["id"]), "--json"])
    assert again.exit_code == 0, again.output
    shown = json.loads(again.stdout)
    assert shown["already_ended"] is True and shown["state"] == "expired"
    assert "had already ended" in runner.invoke(main, ["silence", "expire", str(made["id"])]).stdout
    remaining = json.loads(runner.invoke(main, ["silence", "list", "--json"]).stdout)
    assert [s["id"] for s in remaining] == [pending["id"]]
    every = json.loads(runner.invoke(main, ["silence", "list", "--json", "--all"]).stdout)
    assert [s["state"] for s in every] == ["pending", "expired"]


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--match", "bad name=x", "--duration", "2h"], "not a label name"),
        (["--match", "model=~(", "--duration", "2h"], "not a regular expression"),
        (["--match", "model", "--duration", "2h"], "expected name=value"),
        (["--match", "model=m2", "--duration", "2 hours"], "--duration '2 hours': not a duration"),
        (["--match", "model=m2", "--duration", "0s"], "longer than zero"),
        (["--match", "model=m2", "--duration", "2h", "--starts-at", "soon"], "--starts-at"),
        (["--duration", "2h"], "Missing option '--match'"),
    ],
)
def test_bad_input_is_one_line(runner: CliRunner, args: list[str], says: str) -> None:
    result = runner.invoke(main, ["silence", "add", *args, "--comment", "c"])
    assert result.exit_code != 0
    assert "Traceback" not in result.output
    assert len(result.stderr.strip().splitlines()) == 1 and says in result.stderr


def test_an_unknown_silence_is_one_line(
    empty_database_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before `db upgrade` and for an id that does not exist, one line and exit 1."""
    monkeypatch.setenv("FAITHMON_DATABASE_URL", empty_database_url)
    runner = CliRunner()
    missing = runner.invoke(main, ["silence", "list"])
    assert missing.exit_code == 1 and len(missing.stderr.strip().splitlines()) == 1
    assert runner.invoke(main, ["db", "upgrade"]).exit_code == 0
    assert (
        runner.invoke(main, ["silence", "list"]).stdout.strip() == "no silences active or pending"
    )
    result = runner.invoke(main, ["silence", "expire", "42"])
    assert result.exit_code == 1 and result.stderr.strip() == "Error: no silence #42"
