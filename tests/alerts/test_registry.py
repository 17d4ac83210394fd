"""Sinks are found through one registry: each entry's setting turns it on."""

from __future__ import annotations

import pytest

from faithmon.alerts.sinks import SINKS, LogSink, SinkOptions, make_sinks
from faithmon.cli import wiring
from faithmon.config import SETTINGS, Settings
from faithmon.errors import ConfigError

TURN_ON = {
    "webhook": {
        "FAITHMON_ALERT_WEBHOOK_URL": "http://127.0.0.1:9/hook",
        "FAITHMON_ALERT_WEBHOOK_SECRET": "s3cret",
    },
    "slack": {"FAITHMON_ALERT_SLACK_URL": "http://127.0.0.1:9/slack"},
    "alertmanager": {"FAITHMON_ALERT_ALERTMANAGER_URL": "http://127.0.0.1:9"},
    "email": {"FAITHMON_ALERT_SMTP_HOST": "127.0.0.1:2525", "FAITHMON_ALERT_SMTP_TO": "a@b.c"},
}


def test_with_nothing_set_only_the_log_sink_is_on() -> None:
    sinks = make_sinks(SinkOptions())
    assert [type(s) for s in sinks] == [LogSink]


@pytest.mark.parametrize("name", sorted(SINKS))
def test_each_sink_is_turned_on_by_its_setting(name: str) -> None:
    assert SINKS[name].setting in TURN_ON[name]
    sinks = wiring.make_sinks(Settings.from_env(TURN_ON[name]))
    assert len(sinks) == 2 and isinstance(sinks[0], LogSink)
    assert type(sinks[1]).__module__ == f"faithmon.alerts.sinks.{name}"


def test_every_sink_option_has_a_setting() -> None:
    fields = {setting.field for setting in SETTINGS}
    for name in SinkOptions.__dataclass_fields__:
        assert f"alert_{name}" in fields, name


def test_an_e_mail_sink_without_recipients_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="FAITHMON_ALERT_SMTP_HOST needs FAITHMON_ALERT_SMTP_TO"):
        wiring.make_sinks(Settings.from_env({"FAITHMON_ALERT_SMTP_HOST": "127.0.0.1"}))
    with pytest.raises(ConfigError, match="port 'x' is not a number"):
        make_sinks(SinkOptions(smtp_host="127.0.0.1:x", smtp_to=("a@b.c",)))
