"""The drift detectors' folded state per judge configuration (see :mod:`faithmon.drift.state`)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import delete, select, update
from sqlalchemy.orm import Session

from .tables import DriftStateRow


@dataclass(frozen=True, slots=True)
class StoredState:
    fingerprint: str
    watermark: int
    state: dict[str, Any]
    kept_at: datetime | None = None
    """When it was kept (as read; :func:`save` stamps its own)."""


def load(session: Session, judge: str) -> StoredState | None:
    """``judge``'s state as stored now (not as an earlier read in this session left it)."""
    query = select(DriftStateRow).where(DriftStateRow.judge == judge)
    row = session.scalars(query.execution_options(populate_existing=True)).one_or_none()
    if row is None:
        return None
    return StoredState(row.fingerprint, row.watermark, dict(row.state), row.updated_at)


def save(
    session: Session,
    judge: str,
    stored: StoredState,
    now: datetime,
) -> None:
    """Replace ``judge``'s state with ``stored``."""
    session.execute(delete(DriftStateRow).where(DriftStateRow.judge == judge))
    session.add(
        DriftStateRow(
            judge=judge,
            fingerprint=stored.fingerprint,
            watermark=stored.watermark,
            state=stored.state,
            updated_at=now,
        )
    )


def swap(
    session: Session, judge: str, seen: StoredState, state: dict[str, Any], now: datetime
) -> bool:
    """Replace ``judge``'s state with ``state`` only while it is still the one ``seen``:
    False, and nothing written, when a run kept another since it was read.

    Compared on the watermark and when it was kept: a run with no newer outcome keeps the
    same watermark, yet its horizon (and so its state) has moved on."""
    result = session.execute(
        update(DriftStateRow)
        .where(
            DriftStateRow.judge == judge,
            DriftStateRow.watermark == seen.watermark,
            DriftStateRow.updated_at == seen.kept_at,
        )
        .values(state=state, updated_at=now)
    )
    return bool(result.rowcount)  # type: ignore[attr-defined]
