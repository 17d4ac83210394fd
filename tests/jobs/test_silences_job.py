"""The worker's glue around silences: a running silence stops a notification to a real
webhook on 127.0.0.1 (the alert is still stored), and when it is expired the next drift
run tells the still-firing alert once."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy.orm import Session, sessionmaker

from faithmon.alerts import deliver
from faithmon.alerts.silencing import make_silence
from faithmon.alerts.sinks import WebhookSink
from faithmon.jobs.silences import muting, notify_after_silences
from faithmon.model import Alert
from faithmon.store import alerts as store_alerts
from faithmon.store import silences as store_silences
from tests.alerts.factory import SECRET, serving

# The dialect is not the point here: PostgreSQL runs in the second_backend tier.
pytestmark = pytest.mark.one_backend


def test_a_silenced_alert_is_told_once_after_its_silence(
    sessions: sessionmaker[Session],
) -> None:
    now = datetime.now(UTC)
    with sessions() as session, session.begin():
        (firing,) = store_alerts.save_alerts(
            session,
            [
                Alert(
                    rule="faithfulness_drift",
                    segment={"model": "m2", "tenant": "acme"},
                    state="firing",
                    severity="critical",
                    opened_at=now,
                    updated_at=now,
                    notified_at=now,
                    details={"current_rate": 0.4, "baseline_rate": 0.05, "records": 80},
                )
            ],
        )
        silence = store_silences.add_silence(
            session, make_silence(["model=m2"], timedelta(hours=2), "rollout", "me", now)
        )
    with serving() as receiver:
        sink = WebhookSink(f"{receiver.url}/hooks", SECRET)
        deliver(muting(sessions, [sink]), [firing])
        assert receiver.received == []
        with sessions() as session:
            stored = store_alerts.get_alert(session, firing.id or 0)
        assert stored is not None and stored.state == "firing"
        assert stored.details["muted_by_silence"] == silence.id
        # While it runs, nothing is due.
        assert notify_after_silences(sessions, [sink], now - timedelta(hours=1), now) == 0
        later = now + timedelta(minutes=5)
        with sessions() as session, session.begin():
            store_silences.expire_silence(session, silence.id or 0, later)
        after = later + timedelta(seconds=1)
        assert notify_after_silences(sessions, [sink], now, after) == 1
        (told,) = receiver.received
        assert json.loads(told.body)["alert"]["id"] == firing.id
        # Once told, not again.
        assert notify_after_silences(sessions, [sink], now, after + timedelta(minutes=1)) == 0
        assert len(receiver.received) == 1
