"""A group's one message, as each real sink sends it to a receiver on 127.0.0.1: one
Alertmanager request holding every alert with its labels, one e-mail (aiosmtpd) listing
them under a headline that counts them, and a log sink that says each alert."""

from __future__ import annotations

import json
import logging
from dataclasses import replace

import pytest

from faithmon.alerts.grouping import route_key
from faithmon.alerts.matchers import parse_all
from faithmon.alerts.routing import Router
from faithmon.alerts.rules import Route
from faithmon.alerts.sinks import AlertmanagerSink, EmailSink, LogSink
from faithmon.model import AlertGroup
from tests.alerts.factory import ALERT, serving
from tests.alerts.smtp import smtp_inbox

RESOLVED = replace(
    ALERT,
    id=4,
    segment={"tenant": "acme", "model": "m3"},
    state="resolved",
    resolved_at=ALERT.opened_at,
)
GROUP = AlertGroup("route-key", {"tenant": "acme"}, (ALERT, RESOLVED))


def test_alertmanager_gets_the_group_in_one_request() -> None:
    """Both alerts in one POST, each with its labels; the resolved one has its end."""
    with serving() as receiver:
        AlertmanagerSink(receiver.url).send_group(GROUP)
    (request,) = receiver.received
    items = json.loads(request.body)
    assert request.path == "/api/v2/alerts"
    assert [i["labels"]["model"] for i in items] == ["gpt-4o", "m3"]
    assert "endsAt" not in items[0] and "endsAt" in items[1]


def test_one_email_lists_the_group() -> None:
    """One message whose subject counts the alerts by state and names the group."""
    with smtp_inbox() as inbox:
        sink = EmailSink("127.0.0.1", inbox.port, "faithmon@localhost", ["oncall@example.org"])
        sink.send_group(GROUP)
    (message,) = inbox.messages
    assert message["Subject"] == "[faithmon] 2 alerts (1 firing, 1 resolved) for tenant=acme"
    body = message.get_payload(decode=True).decode()
    assert "[firing] model=gpt-4o" in body and "[resolved] model=m3" in body


def test_a_sink_without_groups_hears_each_alert(caplog: pytest.LogCaptureFixture) -> None:
    """The log sink has no group form: the router tells it each alert (one line each)."""
    route = Route(parse_all([]), ("log",), group_by=("tenant",))
    router = Router((route,), {"log": LogSink()})
    with caplog.at_level(logging.INFO, logger="faithmon.alerts"):
        assert router.send_group(replace(GROUP, route=route_key(route)))
    lines = [r.getMessage() for r in caplog.records if r.name == "faithmon.alerts"]
    assert len(lines) == 2 and "[resolved]" in lines[1]
