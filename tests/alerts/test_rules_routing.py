"""Routes send each alert where its labels say, and the kind's rule shapes what it says:
through real sinks to receivers on 127.0.0.1."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from faithmon.alerts import ListSink, deliver
from faithmon.alerts.matchers import parse_all
from faithmon.alerts.routing import Router, build_router, sinks_from_settings
from faithmon.alerts.rules import KindRule, Route, load
from faithmon.alerts.sinks import LogSink, SinkOptions, SlackSink
from faithmon.errors import ConfigError
from faithmon.model import Alert
from tests.alerts.factory import ALERT, SECRET, Receiver, serving


def alert(**segment: str) -> Alert:
    return replace(ALERT, segment=segment)


def route(match: list[str], sinks: list[str], go_on: bool = False) -> Route:
    return Route(parse_all(match), tuple(sinks), go_on)


def router(*routes: Route, fallback: ListSink | None = None) -> tuple[Router, dict[str, ListSink]]:
    sinks = {name: ListSink() for name in ("a", "b", "c")}
    return Router(routes, sinks, fallback=fallback or ListSink()), sinks


def heard(sinks: dict[str, ListSink]) -> dict[str, int]:
    return {name: len(sink.alerts) for name, sink in sinks.items() if sink.alerts}


def test_the_first_matching_route_wins_unless_it_continues() -> None:
    """Without `continue` the walk stops at the first match; with it, later routes hear too."""
    stop, sinks = router(route(["tenant=acme"], ["a"]), route([], ["b"]))
    stop.send(ALERT)
    assert heard(sinks) == {"a": 1}
    go_on, sinks = router(route(["tenant=acme"], ["a"], go_on=True), route([], ["b"]))
    go_on.send(ALERT)
    assert heard(sinks) == {"a": 1, "b": 1}


def test_a_sink_named_twice_hears_once() -> None:
    """Two matching routes naming one sink send it the alert once."""
    both, sinks = router(
        route([], ["a", "b"], go_on=True), route(["kind=faithfulness_drift"], ["a"])
    )
    both.send(ALERT)
    assert heard(sinks) == {"a": 1, "b": 1}


@pytest.mark.parametrize(
    ("matcher", "hits", "misses"),
    [
        ("model=gpt-4o", {"model": "gpt-4o"}, {"model": "gpt-4o-mini"}),
        ("route!=health", {"route": "/ask"}, {"route": "health"}),
        ("route!=health", {}, {"route": "health"}),  # no label: the empty value
        ("tenant=~acme|globex", {"tenant": "globex"}, {"tenant": "acme-eu"}),  # anchored
        ("tenant!~acme|globex", {"tenant": "initech"}, {"tenant": "acme"}),
    ],
)
def test_each_matcher_kind(matcher: str, hits: dict[str, str], misses: dict[str, str]) -> None:
    """Equal, not equal, regex (whole value) and negated regex, on the segment's labels."""
    routed, sinks = router(route([matcher], ["a"]), route([], ["b"]))
    routed.send(alert(**hits))
    routed.send(alert(**misses))
    assert len(sinks["a"].alerts) == 1 and sinks["a"].alerts[0].segment == hits
    assert len(sinks["b"].alerts) == 1 and sinks["b"].alerts[0].segment == misses


def test_kind_and_severity_are_labels() -> None:
    """Matchers also see the alert's kind and severity."""
    routed, sinks = router(route(["kind=no_data"], ["a"]), route(["severity=~warn.*"], ["b"]))
    routed.send(ALERT)
    routed.send(replace(ALERT, rule="no_data"))
    assert [a.rule for a in sinks["a"].alerts] == ["no_data"]
    assert [a.rule for a in sinks["b"].alerts] == ["faithfulness_drift"]


def test_an_unmatched_alert_goes_to_the_empty_match_route_else_the_log() -> None:
    """The catch-all route takes what the others did not; with none, the log sink does."""
    caught, sinks = router(route(["tenant=globex"], ["a"]), route([], ["c"]))
    caught.send(ALERT)
    assert heard(sinks) == {"c": 1}
    fallback = ListSink()
    lost, sinks = router(route(["tenant=globex"], ["a"]), fallback=fallback)
    lost.send(ALERT)
    assert heard(sinks) == {} and fallback.alerts == [ALERT]


def test_with_no_route_the_log_sink_hears(caplog: pytest.LogCaptureFixture) -> None:
    """A router built without a fallback logs the unrouted alert."""
    caplog.set_level(logging.WARNING, "faithmon.alerts")
    Router((), {}).send(ALERT)
    assert any("faithfulness_drift [firing]" in r.getMessage() for r in caplog.records)


def test_one_failing_sink_does_not_stop_the_others(receiver: Receiver) -> None:
    """A sink whose receiver refuses is logged; the route's next sink still hears."""
    receiver.statuses = [400]
    kept = ListSink()
    Router((route([], ["slack", "kept"]),), {"slack": SlackSink(receiver.url), "kept": kept}).send(
        ALERT
    )
    assert kept.alerts and len(receiver.received) == 1


RULES = """
[sinks.oncall]
type = "webhook"
url = "{url}/hooks"
secret_env = "ONCALL_SECRET"

[sinks.chat]
type = "slack"
url = "{url}/slack"

[sinks.am]
type = "alertmanager"
url = "{url}/am"

[[routes]]
match = ["tenant=acme"]
sinks = ["oncall", "chat", "am"]

[rules.faithfulness_drift]
severity = "critical"
runbook_url = "https://runbooks.example.com/faithfulness"
summary = "{{{{ segment }}}}: {{{{ '%.0f%%' | format(current.rate * 100) }}}} unsupported"
description = "{{{{ current.records }}}} records; e.g. {{{{ examples[0] }}}}; <b>as is</b>"
"""


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    with serving() as state:
        yield state


def test_severity_and_rendered_messages_reach_each_receiver(
    tmp_path: Path, receiver: Receiver
) -> None:
    """The kind's severity replaces the alert's; the summary, description and runbook reach
    the webhook's JSON, the Slack text and the Alertmanager annotations."""
    path = tmp_path / "rules.toml"
    path.write_text(RULES.format(url=receiver.url))
    env = {"ONCALL_SECRET": SECRET}
    sinks = sinks_from_settings(str(path), SinkOptions(), env)
    deliver(sinks, [ALERT])
    by_path = {r.path: json.loads(r.body) for r in receiver.received}
    summary = "model=gpt-4o,route=/ask,tenant=acme: 31% unsupported"
    description = f"80 records; e.g. {'ab' * 16}; <b>as is</b>"  # plain text: not escaped
    hook = by_path["/hooks"]["alert"]
    assert hook["severity"] == "critical"
    assert hook["details"]["summary"] == summary
    assert hook["details"]["description"] == description
    assert hook["details"]["runbook_url"] == "https://runbooks.example.com/faithfulness"
    slack = by_path["/slack"]["text"]
    assert slack.startswith(f"*{summary}*") and "runbooks.example.com" in slack
    (item,) = by_path["/am/api/v2/alerts"]
    assert item["labels"]["severity"] == "critical"
    assert item["annotations"]["summary"] == summary
    assert item["annotations"]["description"] == description
    assert item["annotations"]["runbook_url"] == "https://runbooks.example.com/faithfulness"


def test_a_template_failing_at_send_time_keeps_the_notification(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The alert goes out with the plain text; one log line names the template, not the
    content."""
    kept = ListSink()
    rule = KindRule("faithfulness_drift", summary="{{ details.reason }}: {{ segment }}")
    caplog.set_level(logging.WARNING, "faithmon.alerts")
    Router((route([], ["a"]),), {"a": kept}, {"faithfulness_drift": rule}).send(ALERT)
    (sent,) = kept.alerts
    assert sent.details["summary"].startswith("faithfulness_drift [firing] model=gpt-4o")
    lines = [r.getMessage() for r in caplog.records if r.name == "faithmon.alerts.routing"]
    assert len(lines) == 1 and "summary template of [rules.faithfulness_drift]" in lines[0]
    assert "acme" not in lines[0] and "gpt-4o" not in lines[0]


def test_without_a_rules_file_the_settings_sinks_stay() -> None:
    """FAITHMON_ALERT_RULES unset: the FAITHMON_ALERT_* sinks, the log first, as before."""
    sinks = sinks_from_settings("", SinkOptions())
    assert [type(s) for s in sinks] == [LogSink]


def test_a_refused_url_at_build_names_the_file_and_sink(tmp_path: Path) -> None:
    """A link-local sink URL is refused when the router is built, naming the key, not the URL."""
    path = tmp_path / "rules.toml"
    path.write_text('[sinks.am]\ntype = "alertmanager"\nurl = "http://169.254.169.254/secret"\n')
    rules = load(path, {}, allow_link_local=True)
    with pytest.raises(ConfigError, match=r"rules.toml: sinks.am.url: .*ALLOW_LINK_LOCAL") as info:
        build_router(rules, SinkOptions())
    assert "/secret" not in str(info.value)


def test_an_email_route_carries_the_summary_as_its_subject(tmp_path: Path) -> None:
    """An e-mail sink from the file reaches aiosmtpd on 127.0.0.1; the subject is the summary
    on one line, whatever newlines the template wrote."""
    from tests.alerts.smtp import smtp_inbox

    path = tmp_path / "rules.toml"
    with smtp_inbox() as inbox:
        path.write_text(
            f'[sinks.mail]\ntype = "email"\nhost = "127.0.0.1"\nport = {inbox.port}\n'
            'to = ["oncall@example.org"]\n[[routes]]\nsinks = ["mail"]\n'
            '[rules.faithfulness_drift]\nsummary = "{{ segment }}\\nis drifting"\n'
        )
        build_router(load(path, {}), SinkOptions()).send(ALERT)
    (message,) = inbox.messages
    assert message["Subject"] == "[faithmon] model=gpt-4o,route=/ask,tenant=acme is drifting"
    assert "summary: model=gpt-4o" in message.get_payload(decode=True).decode()


def test_secrets_never_reach_the_log(
    tmp_path: Path, receiver: Receiver, caplog: pytest.LogCaptureFixture
) -> None:
    """A failing signed webhook is logged by its sink name; neither the secret nor the
    URL's path appears in any log line."""
    path = tmp_path / "rules.toml"
    path.write_text(
        f'[sinks.oncall]\ntype = "webhook"\nurl = "{receiver.url}/hooks/T0K3N"\n'
        'secret_env = "ONCALL_SECRET"\n[[routes]]\nsinks = ["oncall"]\n'
    )
    receiver.statuses = [400]
    caplog.set_level(logging.DEBUG)
    build_router(
        load(path, {"ONCALL_SECRET": SECRET}), SinkOptions(), {"ONCALL_SECRET": SECRET}
    ).send(ALERT)
    assert len(receiver.received) == 1
    logged = "\n".join(r.getMessage() + str(r.exc_info) for r in caplog.records)
    assert "alert sink oncall failed" in logged
    assert SECRET not in logged and "T0K3N" not in logged
