"""The alert outbox as stored: alerts of grouped routes waiting for their group's message,
and each group's state (when it last sent, what it told of each incident). The outbox is
drained at every notify run, so it stays small; rows are deleted once their group is sent.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import delete, func, select
from sqlalchemy.orm import Session

from .tables import AlertGroupRow, OutboxRow


@dataclass(frozen=True, slots=True)
class Waiting:
    """A group with alerts in the outbox."""

    route_key: str
    group_key: str
    labels: Mapping[str, str]
    first_at: datetime
    last_sent_at: datetime | None
    told: Mapping[str, Any]


def enqueue(
    session: Session,
    route_key: str,
    group_key: str,
    labels: Mapping[str, str],
    alert: Mapping[str, Any],
    now: datetime,
) -> None:
    session.add(
        OutboxRow(
            route_key=route_key,
            group_key=group_key,
            labels=dict(labels),
            alert=dict(alert),
            enqueued_at=now,
        )
    )


def waiting(session: Session) -> list[Waiting]:
    """Every group with alerts in the outbox, with its state, oldest first."""
    first = (
        select(
            OutboxRow.route_key,
            OutboxRow.group_key,
            func.min(OutboxRow.enqueued_at).label("first_at"),
            func.min(OutboxRow.id).label("first_id"),
        )
        .group_by(OutboxRow.route_key, OutboxRow.group_key)
        .subquery()
    )
    rows = session.execute(
        select(first, AlertGroupRow.last_sent_at, AlertGroupRow.told, OutboxRow.labels)
        .join(OutboxRow, OutboxRow.id == first.c.first_id)
        .outerjoin(
            AlertGroupRow,
            (AlertGroupRow.route_key == first.c.route_key)
            & (AlertGroupRow.group_key == first.c.group_key),
        )
        .order_by(first.c.first_id)
    ).all()
    return [
        Waiting(r.route_key, r.group_key, r.labels, r.first_at, r.last_sent_at, r.told or {})
        for r in rows
    ]


def take(session: Session, route_key: str, group_key: str) -> list[tuple[int, dict[str, Any]]]:
    """One group's waiting alerts (row id, alert), in the order they came."""
    rows = session.execute(
        select(OutboxRow.id, OutboxRow.alert)
        .where(OutboxRow.route_key == route_key, OutboxRow.group_key == group_key)
        .order_by(OutboxRow.id)
    ).all()
    return [(r.id, r.alert) for r in rows]


def settle(
    session: Session,
    group: Waiting,
    ids: Sequence[int],
    sent_at: datetime | None,
    told: Mapping[str, Any],
) -> None:
    """Remove the alerts ``ids`` from the outbox and keep what the group told; ``sent_at``
    None: nothing was sent (every alert was held back), so the group's clock stays."""
    if ids:
        session.execute(delete(OutboxRow).where(OutboxRow.id.in_(list(ids))))
    row = session.get(AlertGroupRow, (group.route_key, group.group_key))
    if row is None:
        row = AlertGroupRow(
            route_key=group.route_key,
            group_key=group.group_key,
            labels=dict(group.labels),
            last_sent_at=None,
            told={},
        )
        session.add(row)
    if sent_at is not None:
        row.last_sent_at = sent_at
    row.told = dict(told)
