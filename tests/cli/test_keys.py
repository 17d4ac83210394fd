"""`faithmon keys`: a key is printed once and stored as a hash; bad input is one line."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from faithmon.api.keys import key_hash, prefix_of
from faithmon.cli import main

# The dialect is not the point here: PostgreSQL runs in the second_backend tier.
pytestmark = pytest.mark.one_backend


@pytest.fixture
def runner(database_url: str, monkeypatch: pytest.MonkeyPatch) -> CliRunner:
    monkeypatch.setenv("FAITHMON_DATABASE_URL", database_url)
    return CliRunner()


def test_create_list_revoke(runner: CliRunner, database_url: str) -> None:
    made = runner.invoke(main, ["keys", "create", "--scopes", "read,ingest", "--json"])
    assert made.exit_code == 0, made.output
    shown = json.loads(made.stdout)
    assert shown["scopes"] == ["ingest", "read"] and shown["tenant"] is None
    assert prefix_of(shown["key"]) is not None
    listed = runner.invoke(main, ["keys", "list", "--json"])
    [entry] = json.loads(listed.stdout)
    assert shown["key"] not in listed.stdout and key_hash(shown["key"]) not in listed.stdout
    assert entry["prefix"] == prefix_of(shown["key"]) and entry["revoked_at"] is None
    assert runner.invoke(main, ["keys", "revoke", str(shown["id"])]).exit_code == 0
    again = runner.invoke(main, ["keys", "revoke", str(shown["id"])])
    assert again.exit_code == 1 and f"no active key #{shown['id']}" in again.stderr


def test_bad_scopes_are_one_line(runner: CliRunner) -> None:
    result = runner.invoke(main, ["keys", "create", "--scopes", "read,write"])
    assert result.exit_code == 1 and "unknown scope write" in result.stderr
    assert "Traceback" not in result.output


def test_a_deploy_key_is_stored_once(runner: CliRunner, monkeypatch: pytest.MonkeyPatch) -> None:
    generated = runner.invoke(main, ["keys", "generate"]).stdout.strip()
    monkeypatch.setenv("COLLECTOR_KEY", generated)
    args = ["keys", "create", "--scopes", "ingest", "--key-from-env", "COLLECTOR_KEY"]
    first = runner.invoke(main, args)
    assert first.exit_code == 0 and "stored key #1 from COLLECTOR_KEY" in first.stdout
    assert generated not in first.output
    second = runner.invoke(main, args)
    assert second.exit_code == 0 and "stored already" in second.stdout
    assert len(json.loads(runner.invoke(main, ["keys", "list", "--json"]).stdout)) == 1
    monkeypatch.setenv("COLLECTOR_KEY", "password123")
    weak = runner.invoke(main, args)
    assert weak.exit_code == 1 and "does not hold a faithmon key" in weak.stderr
