"""Silences at delivery: a notification a running silence matches is not sent (the alert
still changes state and is stored), and once the silence is over a still-firing alert is
told once."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from datetime import UTC, datetime

from ..alerts import deliver
from ..alerts.silencing import due_after_silence, muted, silencer
from ..model import Alert, AlertSink
from ..model.silences import Silence
from ..store import Sessions
from ..store import alerts as store_alerts
from ..store import silences as store_silences

logger = logging.getLogger(__name__)


def silence_check(
    sessions: Sessions,
) -> tuple[Callable[[Alert], Silence | None], Callable[[Alert, Silence], None]]:
    """Which running silence stops an alert's notification (asking the store as it sends:
    silences are added by people at any time, and alerts are few, so one query each costs
    nothing), and how a stopped one is recorded on the alert."""

    def silenced(alert: Alert) -> Silence | None:
        now = datetime.now(UTC)
        with sessions() as session:
            running = store_silences.active_silences(session, now)
        return silencer(running, now)(alert)

    def record(alert: Alert, silence: Silence) -> None:
        if alert.id is None or silence.id is None:
            return
        with sessions() as session, session.begin():
            store_silences.mark_muted(
                session, alert.id, silence.id, alert.notified_at or datetime.now(UTC)
            )

    return silenced, record


def muting(sessions: Sessions, sinks: Sequence[AlertSink]) -> list[AlertSink]:
    """``sinks``, each dropping the notifications a running silence covers."""
    silenced, record = silence_check(sessions)
    return muted(sinks, silenced, record)


def notify_after_silences(
    sessions: Sessions, sinks: Sequence[AlertSink], since: datetime, now: datetime
) -> int:
    """Tell the firing alerts whose notification a silence stopped, now that no silence
    stops them (``since``: the previous call, so a silence that ended between is seen)."""
    with sessions() as session, session.begin():
        running = store_silences.active_silences(session, now)
        ended = store_silences.ended_silences(session, since, now)
        if not running and not ended:
            return 0
        # Locked: what is due is decided on the alerts as the other writers left them.
        found = store_alerts.open_alerts(session, lock=True)
        due = due_after_silence(found, [*running, *ended], now)
        store_silences.mark_told(session, [a.id for a in due if a.id is not None], now)
    if due:
        logger.info("faithmon: %d alerts told now that their silence is over", len(due))
    deliver(sinks, due)
    return len(due)
