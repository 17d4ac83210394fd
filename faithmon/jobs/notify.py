"""Grouped notifications: the outbox a rules file's grouped routes write to, and the notify
job that sends each due group as one message (what is due and what goes in it is
:mod:`faithmon.alerts.grouping`'s rule; this module keeps it in the store).

Run under the ``notify`` singleton lock, so several workers send each group once.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from datetime import UTC, datetime

from ..alerts.grouping import (
    forget_before,
    group_key,
    is_due,
    select,
    timing,
    told_from_json,
    told_to_json,
)
from ..alerts.lifecycle import from_json, to_json
from ..alerts.routing import Enqueue, Router
from ..model import Alert, AlertGroup
from ..model.silences import Silence
from ..store import Sessions
from ..store import outbox as store_outbox

logger = logging.getLogger(__name__)

Clock = Callable[[], datetime]


def _now() -> datetime:
    return datetime.now(UTC)


def outbox(sessions: Sessions, clock: Clock = _now) -> Enqueue:
    """What a router's grouped routes call: the alert is kept until its group is due."""

    def enqueue(route_key: str, labels: Mapping[str, str], alert: Alert) -> None:
        with sessions() as session, session.begin():
            store_outbox.enqueue(
                session, route_key, group_key(labels), labels, to_json(alert), clock()
            )

    return enqueue


def flush(
    sessions: Sessions,
    router: Router,
    now: datetime | None = None,
    silenced: Callable[[Alert], Silence | None] | None = None,
    on_muted: Callable[[Alert, Silence], None] | None = None,
) -> int:
    """Send every due group as one message; returns the messages sent.

    ``silenced`` asks again at sending time, since a silence may have been added while
    the group waited: a silenced alert is left out (``on_muted`` records it), and the
    group does not count it told, so it is told when its silence ends.
    """
    now = now or _now()
    with sessions() as session:
        groups = store_outbox.waiting(session)
    sent = 0
    for group in groups:
        route = router.by_key.get(group.route_key)
        when = timing(route) if route is not None else None
        if when is not None and not is_due(group.first_at, group.last_sent_at, now, when):
            continue
        with sessions() as session:
            taken = store_outbox.take(session, group.route_key, group.group_key)
        alerts: list[Alert] = []
        for row_id, value in taken:
            try:
                alerts.append(from_json(value))
            except (KeyError, TypeError, ValueError):
                logger.warning("faithmon: outbox row %d is not an alert; dropped", row_id)
        told = told_from_json(group.told)
        if when is None:
            router.send_group(AlertGroup(group.route_key, group.labels, tuple(alerts)))
            chosen: list[Alert] = []
        else:
            kept = []
            for alert in alerts:
                silence = silenced(alert) if silenced is not None else None
                if silence is None:
                    kept.append(alert)
                elif on_muted is not None:
                    on_muted(alert, silence)
            chosen, told = select(kept, told, now, when.repeat_interval)
            told = forget_before(told, now - when.repeat_interval)
            if chosen:
                router.send_group(AlertGroup(group.route_key, group.labels, tuple(chosen)))
                sent += 1
        with sessions() as session, session.begin():
            store_outbox.settle(
                session,
                group,
                [row_id for row_id, _ in taken],
                now if chosen else None,
                told_to_json(told),
            )
    return sent
