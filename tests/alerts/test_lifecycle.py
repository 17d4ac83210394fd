"""Alert lifecycle (pending → firing → resolved) and delivery to sinks."""

from __future__ import annotations

import logging
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from faithmon.alerts import ListSink, Policy, deliver, reconcile, to_tell
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


def drift_signal(level: str, recovered: bool, **details: object) -> Signal:
    """A drift detector's signal: it says whether the segment looks recovered."""
    return signal(level, recovered=recovered, last_at="2026-03-01T13:00:00+00:00", **details)


def test_firing_resolves_only_after_enough_recovered_runs(firing_alert: Alert) -> None:
    """A CUSUM back at ok is not enough: the recent rate must look recovered for
    recovery_runs runs in a row, and a relapse starts the count again."""
    policy = Policy(recovery_runs=3)
    alert = firing_alert
    states = []
    for i, recovered in enumerate([True, True, False, True, True, True]):
        [alert] = reconcile(
            [alert], [drift_signal("ok", recovered)], NOW + timedelta(minutes=i), policy
        )
        states.append((alert.state, alert.details["recovered_runs"]))
    assert states == [
        ("firing", 1),
        ("firing", 2),
        ("firing", 0),
        ("firing", 1),
        ("firing", 2),
        ("resolved", 3),
    ]
    assert alert.details["reset_at"] == "2026-03-01T13:00:00+00:00"


def test_explained_firing_alert_resolves_at_once(firing_alert: Alert) -> None:
    """A segment another one now explains needs no alert of its own."""
    [alert] = reconcile(
        [firing_alert], [drift_signal("ok", False, explained_by={"model": "m3"})], NOW
    )
    assert alert.state == "resolved"


def test_notifications_on_changes_and_reminders_while_firing() -> None:
    """Sinks hear of opening, firing and resolving, and of a firing alert again only
    after the renotify interval."""
    policy = Policy(recovery_runs=1, renotify=timedelta(hours=4))
    [opened] = reconcile([], [drift_signal("pending", False)], NOW, policy)
    assert to_tell([opened]) == [opened]
    opened = replace(opened, id=1)
    [fired] = reconcile([opened], [drift_signal("firing", False)], NOW + timedelta(minutes=1))
    assert to_tell([fired]) == [fired]
    quiet_times = [NOW + timedelta(hours=h) for h in (1, 2, 3)]
    alert = fired
    for when in quiet_times:
        [alert] = reconcile([alert], [drift_signal("firing", False)], when, policy)
        assert to_tell([alert]) == []
    [reminder] = reconcile(
        [alert], [drift_signal("firing", False)], NOW + timedelta(hours=4, minutes=2), policy
    )
    assert to_tell([reminder]) == [reminder]
    [resolved] = reconcile([reminder], [drift_signal("ok", True)], NOW + timedelta(hours=5), policy)
    assert resolved.state == "resolved" and to_tell([resolved]) == [resolved]


def test_flapping_segment_reopens_its_alert_quietly_within_the_cooldown(
    firing_alert: Alert,
) -> None:
    """Back within the cooldown: the resolved alert reopens (same id) and stays quiet
    while pending; it is told again once it fires. After the cooldown, a new alert."""
    policy = Policy(cooldown=timedelta(minutes=30))
    resolved = replace(firing_alert, state="resolved", resolved_at=NOW, details={})
    soon = NOW + timedelta(minutes=10)
    [reopened] = reconcile([], [drift_signal("pending", False)], soon, policy, [resolved])
    assert (reopened.id, reopened.state, reopened.resolved_at) == (7, "pending", None)
    assert reopened.details["reopened"] == 1
    assert to_tell([reopened]) == []
    [fires] = reconcile([], [drift_signal("firing", False)], soon, policy, [resolved])
    assert fires.id == 7 and to_tell([fires]) == [fires]
    later = NOW + timedelta(hours=1)
    [fresh] = reconcile([], [drift_signal("pending", False)], later, policy, [resolved])
    assert fresh.id is None and to_tell([fresh]) == [fresh]


def test_for_holds_a_short_blip_back() -> None:
    """With the kind's `for`, a firing signal opens a pending alert and fires it only once
    it has lasted that long; a blip that ends first never fires, and nobody hears of it."""
    policy = Policy(hold_for={RULE: timedelta(hours=1)})
    (opened,) = reconcile([], [signal("firing")], OPENED, policy)
    assert opened.state == "pending" and to_tell([opened]) == []
    held = replace(opened, id=7)
    (still,) = reconcile([held], [signal("firing")], OPENED + timedelta(minutes=30), policy)
    assert still.state == "pending" and to_tell([still]) == []
    (blip,) = reconcile([held], [signal("ok")], OPENED + timedelta(minutes=40), policy)
    assert blip.state == "resolved" and to_tell([blip]) == []
    (fired,) = reconcile([held], [signal("firing")], OPENED + timedelta(minutes=61), policy)
    assert fired.state == "firing" and to_tell([fired]) == [fired]


def test_keep_firing_for_rides_out_a_short_dip(firing_alert: Alert) -> None:
    """With `keep_firing_for`, a firing alert whose signal drops stays firing until that long
    after it last fired."""
    policy = Policy(keep_firing_for={RULE: timedelta(hours=1)})
    (seen,) = reconcile([firing_alert], [signal("firing")], NOW, policy)
    stored = replace(seen, id=7)
    (dip,) = reconcile([stored], [signal("ok")], NOW + timedelta(minutes=20), policy)
    assert dip.state == "firing"
    (done,) = reconcile([replace(dip, id=7)], [signal("ok")], NOW + timedelta(minutes=61), policy)
    assert done.state == "resolved"
    # Without the setting, the same dip resolves at once.
    (plain,) = reconcile([stored], [signal("ok")], NOW + timedelta(minutes=20))
    assert plain.state == "resolved"


def test_the_rules_files_for_and_keep_firing_for_reach_the_policy(tmp_path: Path) -> None:
    from faithmon.cli import wiring
    from faithmon.config import Settings

    path = tmp_path / "rules.toml"
    path.write_text('[rules.faithfulness_drift]\nfor = "1h"\nkeep_firing_for = "30m"\n')
    policy = wiring.alert_policy(Settings.from_env({"FAITHMON_ALERT_RULES": str(path)}))
    assert policy.hold_for == {RULE: timedelta(hours=1)}
    assert policy.keep_firing_for == {RULE: timedelta(minutes=30)}
    assert wiring.alert_policy(Settings.from_env({})).hold_for == {}


def test_an_ack_of_a_pending_alert_outlives_the_next_runs(pending_alert: Alert) -> None:
    """A person acknowledges (or a silence mutes) a pending alert: the next run's signal,
    pending still or firing now, keeps the ack and the mute (it replaced them before)."""
    acked = replace(
        pending_alert,
        details={"acked_by": "ana", "acked_at": OPENED.isoformat(), "muted_at": "x"},
    )
    [still] = reconcile([acked], [signal("pending", statistic=3.1)], NOW)
    assert still.details["acked_by"] == "ana" and still.details["muted_at"] == "x"
    [fired] = reconcile([still], [signal("firing", statistic=6.0)], NOW + timedelta(minutes=5))
    assert fired.state == "firing" and fired.details["acked_by"] == "ana"


def test_a_segment_reads_as_people_wrote_it_not_as_its_key() -> None:
    """Messages name a segment unescaped (its key escapes '=' for the store and URLs)."""
    from faithmon.alerts.lifecycle import describe

    alert = Alert(
        "judge_drift", {"judge": "offline/v8 threshold=0"}, "firing", "critical", OPENED, OPENED
    )
    assert "judge=offline/v8 threshold=0" in describe(alert)
    assert "%3D" not in describe(alert)
