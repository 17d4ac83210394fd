"""Alert lifecycle (pending → firing → resolved) and delivery to sinks."""

from __future__ import annotations

import logging
from datetime import UTC, datetime, timedelta

import pytest

from faithmon.alerts import ListSink, deliver, reconcile
from faithmon.model import Alert, Signal

RULE = "faithfulness_drift"
OPENED = datetime(2026, 3, 1, 12, tzinfo=UTC)
NOW = OPENED + timedelta(minutes=5)
SEGMENT = {"model": "m2"}


def signal(level: str, segment: dict[str, str] | None = None, **details: object) -> Signal:
    return Signal(RULE, SEGMENT if segment is None else segment, level, details)  # type: ignore[arg-type]


@pytest.fixture
def pending_alert() -> Alert:
    """A stored pending alert for model m2."""
    return Alert(RULE, dict(SEGMENT), "pending", "warning", OPENED, OPENED, id=7)


@pytest.fixture
def firing_alert() -> Alert:
    """A stored firing alert for model m2."""
    return Alert(RULE, dict(SEGMENT), "firing", "critical", OPENED, OPENED, id=7)


class BrokenSink:
    """A sink whose every send fails."""

    def __init__(self) -> None:
        self.attempts = 0

    def send(self, alert: Alert) -> None:
        self.attempts += 1
        raise ConnectionError("webhook unreachable")


def test_ok_without_open_alert_changes_nothing() -> None:
    """An ok signal for a segment with no open alert yields no change."""
    assert reconcile([], [signal("ok")], NOW) == []


def test_pending_signal_opens_a_warning() -> None:
    """A pending signal without an open alert opens a new pending warning with no id."""
    [alert] = reconcile([], [signal("pending", statistic=3.1)], NOW)

    assert alert.id is None
    assert alert.state == "pending"
    assert alert.severity == "warning"
    assert alert.rule == RULE
    assert alert.segment == SEGMENT
    assert alert.opened_at == alert.updated_at == NOW
    assert alert.resolved_at is None
    assert alert.details == {"statistic": 3.1}


def test_firing_signal_opens_a_critical_alert() -> None:
    """A firing signal without an open alert opens a critical alert directly."""
    [alert] = reconcile([], [signal("firing")], NOW)

    assert (alert.state, alert.severity, alert.id) == ("firing", "critical", None)


def test_pending_moves_to_firing(pending_alert: Alert) -> None:
    """A firing signal on a pending alert makes it firing and critical, keeping its id."""
    [alert] = reconcile([pending_alert], [signal("firing", statistic=6.0)], NOW)

    assert alert.id == 7
    assert alert.state == "firing"
    assert alert.severity == "critical"
    assert alert.opened_at == OPENED
    assert alert.updated_at == NOW
    assert alert.details == {"statistic": 6.0}


def test_pending_stays_pending_on_a_pending_signal(pending_alert: Alert) -> None:
    """A pending signal on a pending alert only refreshes it."""
    [alert] = reconcile([pending_alert], [signal("pending", statistic=3.5)], NOW)

    assert (alert.id, alert.state, alert.severity) == (7, "pending", "warning")
    assert alert.updated_at == NOW
    assert alert.details == {"statistic": 3.5}


def test_firing_stays_firing_on_a_pending_signal(firing_alert: Alert) -> None:
    """An alert never goes back from firing to pending."""
    [alert] = reconcile([firing_alert], [signal("pending", statistic=4.0)], NOW)

    assert alert.state == "firing"
    assert alert.severity == "critical"
    assert alert.updated_at == NOW
    assert alert.details == {"statistic": 4.0}


def test_ok_resolves_an_open_alert(firing_alert: Alert) -> None:
    """An ok signal resolves the open alert and stamps resolved_at."""
    [alert] = reconcile([firing_alert], [signal("ok")], NOW)

    assert alert.id == 7
    assert alert.state == "resolved"
    assert alert.resolved_at == NOW
    assert alert.updated_at == NOW


def test_signals_match_alerts_by_rule_and_segment(firing_alert: Alert) -> None:
    """A signal for another segment does not touch the open alert."""
    changed = reconcile([firing_alert], [signal("pending", {"route": "billing"})], NOW)

    assert [(a.segment, a.state, a.id) for a in changed] == [
        ({"route": "billing"}, "pending", None)
    ]


def test_deliver_keeps_going_when_a_sink_raises(
    pending_alert: Alert, firing_alert: Alert, caplog: pytest.LogCaptureFixture
) -> None:
    """A failing sink is logged and the other sinks still get every alert."""
    broken = BrokenSink()
    kept = ListSink()

    with caplog.at_level(logging.ERROR, logger="faithmon.alerts"):
        deliver([broken, kept], [pending_alert, firing_alert])

    assert kept.alerts == [pending_alert, firing_alert]
    assert broken.attempts == 2
    assert "BrokenSink failed" in caplog.text
