"""Receivers' heartbeats as stored: one row per receiver (``host:port``), written by the
receiver every few seconds and read by the worker's health check."""

from __future__ import annotations

from dataclasses import asdict
from datetime import datetime

from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from ..model.health import ReceiverStatus
from .tables import ReceiverRow


def beat(session: Session, status: ReceiverStatus) -> None:
    """Write a receiver's heartbeat (its row taken over if it ran there before)."""
    row = session.get(ReceiverRow, status.name)
    values = asdict(status)
    if row is None:
        session.add(ReceiverRow(**values))
        return
    for key, value in values.items():
        setattr(row, key, value)


def receivers(session: Session) -> list[ReceiverStatus]:
    rows = session.scalars(select(ReceiverRow).order_by(ReceiverRow.name)).all()
    return [
        ReceiverStatus(
            name=r.name,
            started_at=r.started_at,
            beat_at=r.beat_at,
            stopped_at=r.stopped_at,
            spans=r.spans,
            records=r.records,
            lost=r.lost,
            backlog=r.backlog,
            failing_since=r.failing_since,
            last_error=r.last_error,
        )
        for r in rows
    ]


def forget(session: Session, before: datetime) -> int:
    """Delete the rows of receivers not heard of since ``before`` (gone for good)."""
    result = session.execute(delete(ReceiverRow).where(ReceiverRow.beat_at < before))
    return int(result.rowcount or 0)  # type: ignore[attr-defined]
