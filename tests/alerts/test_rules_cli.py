"""`faithmon rules check`: one ok line, or one line per problem on stderr and exit status 1."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from faithmon.cli import main
from tests.alerts.factory import GOOD

ENV = {"ONCALL_SECRET": "s", "SMTP_PASSWORD": "p"}
BAD = """
[sinks.oncall]
type = "webhook"
url = "https://hooks.example.com"
secret_env = "UNSET_SECRET"

[[routes]]
match = ["tenant=~("]
sinks = ["oncall", "pager"]

[rules.faithfulness_drift]
summary = "{{ current.rat }}"
"""


def run(args: list[str], env: dict[str, str] | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, ["rules", "check", *args], env=env or ENV)
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture
def good(tmp_path: Path) -> Path:
    path = tmp_path / "good.toml"
    path.write_text(GOOD)
    return path


@pytest.fixture
def bad(tmp_path: Path) -> Path:
    path = tmp_path / "bad.toml"
    path.write_text(BAD)
    return path


def test_a_good_file_is_one_ok_line(good: Path) -> None:
    """It says how much the file holds and exits 0."""
    code, out, err = run([str(good)])
    assert (code, err) == (0, "")
    assert out == f"{good}: ok (3 sinks, 2 routes, 3 rule kinds)\n"


def test_the_file_defaults_to_the_setting(good: Path) -> None:
    """Without FILE it checks FAITHMON_ALERT_RULES."""
    code, out, _ = run([], {**ENV, "FAITHMON_ALERT_RULES": str(good)})
    assert code == 0 and out.startswith(f"{good}: ok")


def test_problems_are_one_line_each_on_stderr(bad: Path) -> None:
    """Each problem is its own line naming the file and key; exit 1; no traceback."""
    code, out, err = run([str(bad)])
    assert code == 1 and out == ""
    assert err.splitlines() == [
        f"{bad}: sinks.oncall.secret_env: environment variable UNSET_SECRET is not set",
        f"{bad}: routes[0].match[0]: 'tenant=~(': not a regular expression "
        "(missing ), unterminated subpattern at position 0)",
        f"{bad}: routes[0].sinks[1]: no sink named 'pager' in [sinks]",
        f"{bad}: rules.faithfulness_drift.summary: unknown field current.rat",
    ]
    assert "Traceback" not in out + err


def test_json_lists_the_problems(bad: Path, good: Path) -> None:
    """--json prints the problems as a list, with the counts; the exit status is the same."""
    code, out, _ = run([str(bad), "--json"])
    report = json.loads(out)
    assert code == 1 and report["ok"] is False and len(report["problems"]) == 4
    code, out, _ = run([str(good), "--json"])
    report = json.loads(out)
    assert code == 0 and report == {
        "file": str(good),
        "ok": True,
        "problems": [],
        "sinks": 3,
        "routes": 2,
        "kinds": 3,
    }


def test_a_missing_or_unreadable_file_is_one_line(tmp_path: Path) -> None:
    """A path that is not there, or not TOML, is one line and exit 1."""
    code, _, err = run([str(tmp_path / "nope.toml")])
    assert code == 1 and err == f"{tmp_path / 'nope.toml'}: No such file or directory\n"
    broken = tmp_path / "broken.toml"
    broken.write_text("[sinks\n")
    code, _, err = run([str(broken)])
    assert code == 1 and len(err.splitlines()) == 1 and "not TOML" in err
    assert "Traceback" not in err


def test_no_file_and_no_setting_is_a_usage_error() -> None:
    """Nothing to check: exit 2 saying what to give."""
    code, _, err = run([])
    assert code == 2 and "give FILE or set FAITHMON_ALERT_RULES" in err
