"""Silences as stored, on SQLite and PostgreSQL: added, listed newest first with their state,
ended early (twice is a no-op), the ones that run now, and the marks of a muted alert."""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy.orm import Session, sessionmaker

from faithmon.model import Alert
from faithmon.model.silences import MUTED_AT, MUTED_BY, Silence
from faithmon.store import alerts as store_alerts
from faithmon.store import silences as store
from tests.timing import days_ago

NOW = days_ago(1, hour=12)


def _silence(start: int, end: int, *matchers: str, tenant: str | None = None) -> Silence:
    """Runs from ``start`` to ``end`` hours after NOW."""
    return Silence(
        matchers=matchers or ("model=m2",),
        starts_at=NOW + timedelta(hours=start),
        ends_at=NOW + timedelta(hours=end),
        comment="deploy of m2",
        created_by="oncall",
        created_at=NOW + timedelta(hours=min(start, 0)),
        tenant=tenant,
    )


def test_added_silences_list_newest_first_with_their_state(
    sessions: sessionmaker[Session],
) -> None:
    with sessions.begin() as session:
        ended = store.add_silence(session, _silence(-3, -1))
        active = store.add_silence(session, _silence(-1, 2, "model=m2", "route!=health"))
        pending = store.add_silence(session, _silence(1, 3, tenant="acme"))
    assert active.id is not None and active.matchers == ("model=m2", "route!=health")
    with sessions() as session:
        shown = store.list_silences(session, NOW)
        every = store.list_silences(session, NOW, include_ended=True)
        acme = store.list_silences(session, NOW, tenant="acme")
        page = store.list_silences(session, NOW, 1, include_ended=True, before=pending.id)
        got = store.get_silence(session, active.id)
        other = store.get_silence(session, active.id, tenant="acme")
    assert [s.id for s in shown] == [pending.id, active.id]
    assert [s.state(NOW) for s in shown] == ["pending", "active"]
    assert [s.id for s in every] == [pending.id, active.id, ended.id]
    assert every[-1].state(NOW) == "expired"
    assert [s.id for s in acme] == [pending.id]
    assert [s.id for s in page] == [active.id]
    assert got == active and got.starts_at.tzinfo is not None
    assert other is None


def test_expire_ends_a_silence_now_and_twice_is_a_no_op(sessions: sessionmaker[Session]) -> None:
    with sessions.begin() as session:
        made = store.add_silence(session, _silence(-1, 2))
    assert made.id is not None
    with sessions.begin() as session:
        first = store.expire_silence(session, made.id, NOW)
    with sessions.begin() as session:
        again = store.expire_silence(session, made.id, NOW + timedelta(minutes=5))
        missing = store.expire_silence(session, made.id + 1, NOW)
    assert first is not None and first[1] is True
    assert first[0].ends_at == NOW and first[0].expired_at == NOW
    assert first[0].state(NOW) == "expired"
    assert again is not None and again[1] is False and again[0].ends_at == NOW
    assert missing is None
    with sessions() as session:
        assert store.list_silences(session, NOW) == []
        assert store.active_silences(session, NOW) == []


def test_a_tenant_cannot_expire_another_tenants_silence(sessions: sessionmaker[Session]) -> None:
    with sessions.begin() as session:
        made = store.add_silence(session, _silence(-1, 2, "tenant=globex", tenant="globex"))
    assert made.id is not None
    with sessions.begin() as session:
        assert store.expire_silence(session, made.id, NOW, tenant="acme") is None
    with sessions() as session:
        assert [s.id for s in store.active_silences(session, NOW)] == [made.id]


def test_active_and_ended_silences_by_time(sessions: sessionmaker[Session]) -> None:
    with sessions.begin() as session:
        old = store.add_silence(session, _silence(-5, -4))
        recent = store.add_silence(session, _silence(-2, -1))
        running = store.add_silence(session, _silence(-1, 1))
        store.add_silence(session, _silence(1, 2))
    with sessions() as session:
        assert [s.id for s in store.active_silences(session, NOW)] == [running.id]
        since = NOW - timedelta(hours=3)
        assert [s.id for s in store.ended_silences(session, since, NOW)] == [recent.id]
        wider = NOW - timedelta(hours=6)
        assert [s.id for s in store.ended_silences(session, wider, NOW)] == [old.id, recent.id]


def test_a_muted_alert_is_marked_and_the_mark_goes_when_told(
    sessions: sessionmaker[Session],
) -> None:
    alert = Alert(
        rule="faithfulness_drift",
        segment={"model": "m2"},
        state="firing",
        severity="critical",
        opened_at=NOW,
        updated_at=NOW,
        details={"current_rate": 0.4},
        notified_at=NOW,
    )
    with sessions.begin() as session:
        (saved,) = store_alerts.save_alerts(session, [alert])
    assert saved.id is not None
    with sessions.begin() as session:
        store.mark_muted(session, saved.id, 5, NOW)
        store.mark_muted(session, saved.id + 100, 5, NOW)  # gone: nothing to mark
    with sessions() as session:
        marked = store_alerts.get_alert(session, saved.id)
    assert marked is not None
    assert marked.details[MUTED_BY] == 5 and marked.details[MUTED_AT] == NOW.isoformat()
    assert marked.details["current_rate"] == 0.4
    later = NOW + timedelta(hours=2)
    with sessions.begin() as session:
        store.mark_told(session, [saved.id], later)
    with sessions() as session:
        told = store_alerts.get_alert(session, saved.id)
    assert told is not None and told.notified_at == later
    assert MUTED_AT not in told.details and MUTED_BY not in told.details
