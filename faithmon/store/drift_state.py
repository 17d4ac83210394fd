"""The drift detectors' folded state per judge configuration (see :mod:`faithmon.drift.state`)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import delete
from sqlalchemy.orm import Session

from .tables_derived import DriftStateRow


@dataclass(frozen=True, slots=True)
class StoredState:
    fingerprint: str
    watermark: int
    state: dict[str, Any]


def load(session: Session, judge: str) -> StoredState | None:
    row = session.get(DriftStateRow, judge)
    if row is None:
        return None
    return StoredState(row.fingerprint, row.watermark, dict(row.state))


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
