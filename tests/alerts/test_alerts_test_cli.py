"""`faithmon alerts test` sends a labelled test notification through the real routes and
sinks (here a webhook and a Slack-format receiver on 127.0.0.1) and says what each took,
or the HTTP status with which it refused."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from faithmon.cli import main
from tests.alerts.factory import SECRET, Receiver, serving

RULES = """
[sinks.oncall]
type = "webhook"
url = "{url}/hooks"
secret_env = "ONCALL_SECRET"

[sinks.chat]
type = "slack"
url = "{url}/slack"

[[routes]]
match = ["severity=critical"]
sinks = ["oncall"]

[[routes]]
match = ["tenant=acme"]
sinks = ["oncall"]

[[routes]]
match = []
sinks = ["chat"]
"""


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    with serving() as state:
        yield state


def test_the_test_alert_goes_where_its_labels_route(
    tmp_path: Path, receiver: Receiver, monkeypatch: pytest.MonkeyPatch
) -> None:
    """By its labels, by --sink, or by --severity for a route that matches on it."""
    rules = tmp_path / "rules.toml"
    rules.write_text(RULES.format(url=receiver.url))
    monkeypatch.setenv("FAITHMON_ALERT_RULES", str(rules))
    monkeypatch.setenv("FAITHMON_ALERT_ALLOW_LINK_LOCAL", "false")
    monkeypatch.setenv("ONCALL_SECRET", SECRET)
    runner = CliRunner()
    routed = runner.invoke(main, ["alerts", "test", "--route", "tenant=acme", "--json"])
    assert routed.exit_code == 0, routed.output
    assert json.loads(routed.stdout) == {"labels": {"tenant": "acme"}, "sinks": {"oncall": "sent"}}
    (hook,) = receiver.received
    sent = json.loads(hook.body)["alert"]
    assert hook.path == "/hooks" and sent["rule"] == "test" and sent["details"]["test"] is True
    assert sent["segment"] == {"tenant": "acme"}
    # No label: the empty-match route's sink; --sink names one directly.
    assert runner.invoke(main, ["alerts", "test"]).stdout == "chat: sent\n"
    assert receiver.received[-1].path == "/slack"
    assert runner.invoke(main, ["alerts", "test", "--sink", "oncall"]).stdout == "oncall: sent\n"
    # A route matching on severity is tested with that severity.
    critical = runner.invoke(main, ["alerts", "test", "--severity", "critical", "--json"])
    assert json.loads(critical.stdout)["sinks"] == {"oncall": "sent"}
    assert json.loads(receiver.received[-1].body)["alert"]["severity"] == "critical"
    bad = runner.invoke(main, ["alerts", "test", "--severity", "fatal"])
    assert (
        bad.exit_code == 2 and "'fatal' is not one of 'info', 'warning', 'critical'" in bad.output
    )
    missing = runner.invoke(main, ["alerts", "test", "--sink", "pager"])
    assert (
        missing.exit_code == 1 and "no sink named 'pager' (sinks: chat, oncall)" in missing.stderr
    )


def test_a_sink_that_refuses_is_named_and_the_exit_fails(
    tmp_path: Path, receiver: Receiver, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A 403 and three 500s are shown as those statuses; the exit is 1; the URL is not."""
    rules = tmp_path / "rules.toml"
    rules.write_text(RULES.format(url=receiver.url))
    monkeypatch.setenv("FAITHMON_ALERT_RULES", str(rules))
    monkeypatch.setenv("ONCALL_SECRET", SECRET)
    receiver.statuses.extend([403])
    result = CliRunner().invoke(main, ["alerts", "test", "--route", "tenant=acme"])
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert result.stdout == "oncall: failed (HTTP 403)\n"
    assert receiver.url not in result.output
    # A server error is retried, then reported as the status it was, not as a lost
    # connection.
    receiver.statuses.extend([500, 500, 500])
    result = CliRunner().invoke(main, ["alerts", "test", "--route", "tenant=acme"])
    assert result.exit_code == 1
    assert result.stdout == "oncall: failed (HTTP 500 after 3 attempts)\n"
    assert receiver.statuses == []
