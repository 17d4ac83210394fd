"""Silences as stored, and the marks on an alert whose notification a silence stopped.

Lists are newest first; what runs now and what is still to come (not yet ended) is a range
on ``ix_silences_ends_at``. A tenant-bound reader sees only its tenant's silences.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from sqlalchemy import Select, select
from sqlalchemy.orm import Session

from ..model.silences import MUTED_AT, MUTED_BY, Silence
from ._dialect import for_update
from .tables import AlertRow, SilenceRow


def _silence(row: SilenceRow) -> Silence:
    return Silence(
        id=row.id,
        matchers=tuple(row.matchers),
        starts_at=row.starts_at,
        ends_at=row.ends_at,
        comment=row.comment,
        created_by=row.created_by,
        created_at=row.created_at,
        expired_at=row.expired_at,
        tenant=row.tenant,
    )


def add_silence(session: Session, silence: Silence) -> Silence:
    """Store a new silence (its matchers already checked); returns it with its id."""
    row = SilenceRow(
        matchers=list(silence.matchers),
        starts_at=silence.starts_at,
        ends_at=silence.ends_at,
        comment=silence.comment,
        created_by=silence.created_by,
        created_at=silence.created_at,
        expired_at=silence.expired_at,
        tenant=silence.tenant,
    )
    session.add(row)
    session.flush()
    return _silence(row)


def _of(query: Select[SilenceRow], tenant: str | None) -> Select[SilenceRow]:
    return query if tenant is None else query.where(SilenceRow.tenant == tenant)


def list_silences(
    session: Session,
    now: datetime,
    limit: int = 100,
    include_ended: bool = False,
    tenant: str | None = None,
    before: int | None = None,
) -> list[Silence]:
    """Newest first (ids below ``before``): those not yet ended at ``now`` (active and
    pending), or every one."""
    query = select(SilenceRow)
    if before is not None:
        query = query.where(SilenceRow.id < before)
    if include_ended:
        query = query.order_by(SilenceRow.id.desc()).limit(limit)
        return [_silence(row) for row in session.scalars(_of(query, tenant))]
    # Those not yet ended are few, however many have: read by their end (SQLite would
    # rather walk every silence newest first than sort), then newest first here.
    query = query.where(SilenceRow.ends_at > now).order_by(SilenceRow.ends_at)
    found = sorted(session.scalars(_of(query, tenant)), key=lambda row: row.id, reverse=True)
    return [_silence(row) for row in found[:limit]]


def get_silence(session: Session, silence_id: int, tenant: str | None = None) -> Silence | None:
    """One silence; None when there is none or it is another tenant's."""
    row = session.get(SilenceRow, silence_id)
    if row is None or (tenant is not None and row.tenant != tenant):
        return None
    return _silence(row)


def expire_silence(
    session: Session, silence_id: int, now: datetime, tenant: str | None = None
) -> tuple[Silence, bool] | None:
    """End a silence at ``now``; the bool says whether it was still running (or still to
    come). An ended one is left as it was. None: no such silence (for this tenant).
    Read locked, so of two at once only one finds it running."""
    row = session.scalars(
        for_update(session, select(SilenceRow).where(SilenceRow.id == silence_id))
    ).one_or_none()
    if row is None or (tenant is not None and row.tenant != tenant):
        return None
    if row.expired_at is not None or row.ends_at <= now:
        return _silence(row), False
    row.ends_at = now
    row.expired_at = now
    session.flush()
    return _silence(row), True


def active_silences(session: Session, now: datetime) -> list[Silence]:
    """The silences that run at ``now`` (every tenant's: their matchers carry the tenant)."""
    query = select(SilenceRow).where(SilenceRow.ends_at > now, SilenceRow.starts_at <= now)
    rows = sorted(session.scalars(query.order_by(SilenceRow.ends_at)), key=lambda r: r.id)
    return [_silence(row) for row in rows]


def ended_silences(session: Session, since: datetime, now: datetime) -> list[Silence]:
    """The silences that ended between ``since`` and ``now`` (expired early or not)."""
    query = select(SilenceRow).where(SilenceRow.ends_at > since, SilenceRow.ends_at <= now)
    rows = sorted(session.scalars(query.order_by(SilenceRow.ends_at)), key=lambda r: r.id)
    return [_silence(row) for row in rows]


def mark_muted(session: Session, alert_id: int, silence_id: int, at: datetime) -> None:
    """Record on an alert that its notification of ``at`` was stopped by a silence, so the
    drift job can tell it once the silence ends (``alerts.silencing.due_after_silence``).
    Read locked: the details are written back whole (see ``alerts.open_alerts``)."""
    row = session.scalars(_alerts(session, [alert_id])).one_or_none()
    if row is not None:
        row.details = {**row.details, MUTED_AT: at.isoformat(), MUTED_BY: silence_id}


def mark_told(session: Session, alert_ids: Sequence[int], at: datetime) -> None:
    """Record that the sinks heard of these alerts at ``at`` after their silence ended
    (read locked, as :func:`mark_muted`)."""
    for row in session.scalars(_alerts(session, alert_ids)):
        row.details = {k: v for k, v in row.details.items() if k not in (MUTED_AT, MUTED_BY)}
        row.notified_at = at


def _alerts(session: Session, alert_ids: Sequence[int]) -> Select[AlertRow]:
    # In id order, as the jobs lock them: two writers of several alerts take turns rather
    # than each holding a row the other waits for (a deadlock).
    query = select(AlertRow).where(AlertRow.id.in_(alert_ids)).order_by(AlertRow.id)
    return for_update(session, query)
