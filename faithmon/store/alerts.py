"""Alerts as stored: one open alert per (rule, segment), their changes and acknowledgements."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from ..model import (
    Alert,
    segment_key,
)
from ..model.alerts import ACKED_AT, ACKED_BY
from ._dialect import for_update
from .tables import (
    AlertRow,
)


def to_alert(row: AlertRow) -> Alert:
    return Alert(
        id=row.id,
        rule=row.rule,
        segment=dict(row.segment),
        state=row.state,  # type: ignore[arg-type]
        severity=row.severity,
        opened_at=row.opened_at,
        updated_at=row.updated_at,
        resolved_at=row.resolved_at,
        details=dict(row.details),
        notified_at=row.notified_at,
    )


def open_alerts(session: Session, *rules: str, lock: bool = False) -> list[Alert]:
    """The alerts not resolved, of ``rules`` (every rule without), oldest first.

    ``lock``: the caller writes them back in this transaction (a job reconciling them);
    an acknowledgement or mute written meanwhile waits for it and then sees its change,
    and the job sees theirs, so neither is lost (:func:`._dialect.for_update`)."""
    query = select(AlertRow).where(AlertRow.state != "resolved").order_by(AlertRow.id)
    if rules:
        query = query.where(AlertRow.rule.in_(rules))
    if lock:
        query = for_update(session, query)
    return [to_alert(row) for row in session.scalars(query)]


def list_alerts(session: Session, include_resolved: bool = True) -> list[Alert]:
    query = select(AlertRow).order_by(AlertRow.id)
    if not include_resolved:
        query = query.where(AlertRow.state != "resolved")
    return [to_alert(row) for row in session.scalars(query)]


def save_alerts(session: Session, alerts: Iterable[Alert]) -> list[Alert]:
    """Insert new alerts (id None) and update existing ones; returns them with ids.

    An update replaces the alert whole: read it with ``lock`` (:func:`open_alerts`,
    :func:`resolved_alerts`) in the same transaction, or a change written since is lost."""
    saved = []
    for alert in alerts:
        values = {
            "rule": alert.rule,
            "segment_key": segment_key(alert.segment),
            "segment": dict(alert.segment),
            "state": alert.state,
            "severity": alert.severity,
            "opened_at": alert.opened_at,
            "updated_at": alert.updated_at,
            "resolved_at": alert.resolved_at,
            "details": dict(alert.details),
            "notified_at": alert.notified_at,
        }
        if alert.id is None:
            row = AlertRow(**values)
            session.add(row)
            session.flush()
        else:
            row = session.get_one(AlertRow, alert.id)
            for key, value in values.items():
                setattr(row, key, value)
        saved.append(to_alert(row))
    return saved


def resolved_alerts(
    session: Session, rules: Sequence[str], since: datetime | None = None, lock: bool = False
) -> list[Alert]:
    """The latest resolved alert per (rule, segment) of ``rules`` (resolved after ``since``);
    ``lock`` as for :func:`open_alerts` (the cooldown reopens them)."""
    query = (
        select(AlertRow)
        .where(AlertRow.state == "resolved", AlertRow.rule.in_(rules))
        .order_by(AlertRow.resolved_at)
    )
    if since is not None:
        query = query.where(AlertRow.resolved_at >= since)
    if lock:
        query = for_update(session, query)
    latest = {(row.rule, row.segment_key): row for row in session.scalars(query)}
    return [to_alert(row) for row in latest.values()]


def get_alert(session: Session, alert_id: int) -> Alert | None:
    row = session.get(AlertRow, alert_id)
    return to_alert(row) if row is not None else None


def ack_alert(session: Session, alert_id: int, by: str, at: datetime) -> Alert | None:
    """Record who acknowledged an alert; its state is the detector's, not changed here.

    The first acknowledgement stays: a second one does not replace who took the alert
    (the caller compares ``acked_by`` to tell). The row is read locked: a job writing the
    alert back meanwhile does not drop the acknowledgement, nor this write the job's change."""
    query = for_update(session, select(AlertRow).where(AlertRow.id == alert_id))
    row = session.scalars(query).one_or_none()
    if row is None:
        return None
    if ACKED_BY not in row.details:
        row.details = {**row.details, ACKED_BY: by, ACKED_AT: at.isoformat()}
    return to_alert(row)


def resolutions(session: Session, rules: Sequence[str]) -> list[Alert]:
    """Every resolved alert of ``rules``, oldest resolution first: the drift fold replays
    each restart it caused, not only the latest per segment."""
    query = (
        select(AlertRow)
        .where(AlertRow.state == "resolved", AlertRow.rule.in_(rules))
        .order_by(AlertRow.resolved_at, AlertRow.id)
    )
    return [to_alert(row) for row in session.scalars(query)]
