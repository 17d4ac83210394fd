"""Silences at delivery, against a real webhook listener on 127.0.0.1 and a real store: a
silenced alert is stored and changes state but sends nothing; once the silence ends, an
alert still firing notifies once."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from dataclasses import replace
from datetime import datetime, timedelta

import pytest
from sqlalchemy.orm import Session, sessionmaker

from faithmon.alerts import deliver
from faithmon.alerts.silencing import (
    Muted,
    due_after_silence,
    make_silence,
    muted,
    segment_matchers,
    silenced_by,
    silencer,
)
from faithmon.alerts.sinks import WebhookSink
from faithmon.model import Alert
from faithmon.model.silences import MUTED_AT, Silence, parse_duration
from faithmon.store import alerts as store_alerts
from faithmon.store import silences as store_silences
from tests.alerts.factory import SECRET, Receiver, serving
from tests.timing import days_ago

# The dialect is not the point here: PostgreSQL runs in the second_backend tier.
pytestmark = pytest.mark.one_backend

NOW = days_ago(1, hour=12)


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    with serving() as state:
        yield state


def _alert(**changes: object) -> Alert:
    alert = Alert(
        id=3,
        rule="faithfulness_drift",
        segment={"model": "m2", "tenant": "acme"},
        state="firing",
        severity="critical",
        opened_at=NOW,
        updated_at=NOW,
        details={"current_rate": 0.4, "baseline_rate": 0.05, "records": 80},
        notified_at=NOW,
    )
    return replace(alert, **changes)  # type: ignore[arg-type]


def _silence(*matchers: str, start: int = -1, end: int = 2, sid: int = 9) -> Silence:
    return Silence(
        id=sid,
        matchers=matchers,
        starts_at=NOW + timedelta(hours=start),
        ends_at=NOW + timedelta(hours=end),
        comment="deploy",
        created_by="oncall",
        created_at=NOW + timedelta(hours=min(start, 0)),
    )


def test_silenced_by_needs_every_matcher_and_an_active_silence() -> None:
    labels = {"model": "m2", "tenant": "acme", "kind": "faithfulness_drift"}
    both = _silence("model=m2", "tenant=~acme|globex")
    assert silenced_by([both], labels, NOW) == both
    assert silenced_by([_silence("model=m2", "route=billing")], labels, NOW) is None
    assert silenced_by([_silence("model!=m2")], labels, NOW) is None
    assert silenced_by([_silence("route!=health", "kind=faithfulness_drift")], labels, NOW)
    assert silenced_by([_silence("model=m2", start=1, end=2)], labels, NOW) is None
    assert silenced_by([_silence("model=m2", start=-2, end=0)], labels, NOW) is None
    assert silenced_by([replace(both, expired_at=NOW)], labels, NOW) is None
    assert silenced_by([_silence()], labels, NOW) is None  # no matcher: silences nothing


def test_parse_duration() -> None:
    assert parse_duration("30s") == timedelta(seconds=30)
    assert parse_duration("10m") == timedelta(minutes=10)
    assert parse_duration("2h") == timedelta(hours=2)
    assert parse_duration("1d") == timedelta(days=1)
    for bad in ("", "2", "h", "1.5h", "0s", "-1h", "2w", "400d"):
        with pytest.raises(ValueError):
            parse_duration(bad)


def test_make_silence_checks_and_binds_a_tenant() -> None:
    made = make_silence(["model=m2"], timedelta(hours=2), " why ", "me", NOW, tenant="acme")
    assert made.matchers == ("model=m2", "tenant=acme") and made.comment == "why"
    assert made.starts_at == NOW and made.ends_at == NOW + timedelta(hours=2)
    for matchers, comment, ends in (
        ([], "c", timedelta(hours=1)),
        (["bad name=x"], "c", timedelta(hours=1)),
        (["m=~("], "c", timedelta(hours=1)),
        (["m=x"], " ", timedelta(hours=1)),
        (["m=x"], "c", NOW - timedelta(hours=1)),
    ):
        with pytest.raises(ValueError):
            make_silence(matchers, ends, comment, "me", NOW)
    with pytest.raises(ValueError, match="9999"):
        make_silence(
            ["m=x"], timedelta(days=365), "c", "me", NOW, datetime.max.replace(tzinfo=NOW.tzinfo)
        )


def test_segment_matchers_match_exactly_that_segment() -> None:
    alert = _alert(segment={"route": "a=~b", "model": "m2 ", "tenant": "acme"})
    texts = segment_matchers(alert)
    assert texts[0] == "kind=faithfulness_drift" and "tenant=acme" in texts
    silence = _silence(*texts)
    labels = {**dict(alert.segment), "kind": alert.rule, "severity": "critical"}
    assert silenced_by([silence], labels, NOW) == silence
    for other in (
        {**labels, "route": "a=~bb"},
        {**labels, "model": "m2"},
        {**labels, "kind": "no_data"},
    ):
        assert silenced_by([silence], other, NOW) is None


def test_muted_drops_notifications_during_a_silence_and_one_is_sent_after(
    receiver: Receiver, sessions: sessionmaker[Session], caplog: pytest.LogCaptureFixture
) -> None:
    webhook = WebhookSink(receiver.url + "/hook", SECRET, attempts=1)
    with sessions.begin() as session:
        (alert,) = store_alerts.save_alerts(session, [_alert(id=None)])
        silence = store_silences.add_silence(
            session, make_silence(["model=m2"], timedelta(hours=2), "deploy", "me", NOW)
        )
    assert alert.id is not None and silence.id is not None

    def record(muted_alert: Alert, by: Silence) -> None:
        assert muted_alert.id is not None and by.id is not None
        with sessions.begin() as session:
            store_silences.mark_muted(session, muted_alert.id, by.id, muted_alert.updated_at)

    with sessions() as session:
        running = store_silences.active_silences(session, NOW)
    caplog.set_level(logging.INFO, logger="faithmon.alerts.silencing")
    deliver(muted([webhook], silencer(running, NOW), record), [alert])
    assert receiver.received == []
    (line,) = [r.getMessage() for r in caplog.records if r.name == "faithmon.alerts.silencing"]
    assert f"alert {alert.id} " in line and f"silence {silence.id}" in line
    assert "0.4" not in line and "m2" not in line

    # Another alert, of a segment the silence does not match, goes through.
    other = _alert(id=4, segment={"model": "m1"})
    Muted(webhook, silencer(running, NOW), record).send(other)
    assert len(receiver.received) == 1
    assert json.loads(receiver.received[0].body)["alert"]["id"] == 4

    # Still muted while the silence runs; the alert is stored with its mark.
    with sessions() as session:
        stored = store_alerts.open_alerts(session)
    assert stored[0].details[MUTED_AT] == NOW.isoformat()
    assert due_after_silence(stored, running, NOW + timedelta(hours=1)) == []

    # The silence ends: the firing alert is due once, and sent.
    later = NOW + timedelta(hours=2, minutes=1)
    with sessions() as session:
        now_running = store_silences.active_silences(session, later)
        ended = store_silences.ended_silences(session, NOW, later)
    assert now_running == [] and [s.id for s in ended] == [silence.id]
    due = due_after_silence(stored, now_running + ended, later)
    assert [a.id for a in due] == [alert.id]
    deliver(muted([webhook], silencer(now_running, later), record), due)
    assert len(receiver.received) == 2
    assert json.loads(receiver.received[1].body)["alert"]["id"] == alert.id
    with sessions.begin() as session:
        store_silences.mark_told(session, [a.id for a in due if a.id is not None], later)
    with sessions() as session:
        stored = store_alerts.open_alerts(session)
    assert due_after_silence(stored, ended, later + timedelta(minutes=1)) == []


def test_due_after_silence() -> None:
    silence = _silence("model=m2", start=-1, end=1)
    after = NOW + timedelta(hours=1, minutes=1)
    marked = _alert(details={MUTED_AT: NOW.isoformat(), "muted_by_silence": 9})
    assert due_after_silence([marked], [silence], after) == [marked]
    # Told since it was muted (a renotify went through): not due again.
    told = replace(marked, notified_at=NOW + timedelta(minutes=30))
    assert due_after_silence([told], [silence], after) == []
    # Resolved or pending alerts are not told again.
    for state in ("resolved", "pending"):
        assert due_after_silence([replace(marked, state=state)], [silence], after) == []
    # Another silence still runs: wait for it.
    longer = _silence("tenant=acme", start=-1, end=5, sid=10)
    assert due_after_silence([marked], [silence, longer], after) == []
    # Without the mark (a later change replaced the details): its last notification fell
    # inside a silence that matches it.
    unmarked = _alert()
    assert due_after_silence([unmarked], [silence], after) == [unmarked]
    before = _alert(notified_at=NOW - timedelta(hours=2))
    assert due_after_silence([before], [silence], after) == []
    other = _alert(segment={"model": "m1"})
    assert due_after_silence([other], [silence], after) == []
