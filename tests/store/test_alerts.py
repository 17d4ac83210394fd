"""Alerts as stored, on SQLite and PostgreSQL."""

from __future__ import annotations

from dataclasses import replace

from sqlalchemy.orm import Session, sessionmaker

from faithmon.model import Alert
from faithmon.store import alerts as store_alerts
from tests.store.factory import T0


def test_alerts_round_trip(sessions: sessionmaker[Session]) -> None:
    """Alerts are inserted, updated in place and listed with their segment."""
    alert = Alert(
        rule="faithfulness_drift",
        segment={"model": "m2"},
        state="pending",
        severity="warning",
        opened_at=T0,
        updated_at=T0,
        details={"statistic": 8.0},
    )
    with sessions.begin() as session:
        [saved] = store_alerts.save_alerts(session, [alert])
    assert saved.id is not None
    with sessions.begin() as session:
        store_alerts.save_alerts(session, [replace(saved, state="firing", severity="critical")])
    with sessions() as session:
        [listed] = store_alerts.list_alerts(session)
        open_now = store_alerts.open_alerts(session)
    assert listed.state == "firing" and listed.segment == {"model": "m2"}
    assert listed.opened_at == T0
    assert [a.id for a in open_now] == [saved.id]
