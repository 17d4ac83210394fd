"""Each judge configuration's last drift run (see :mod:`faithmon.drift.summary`)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import delete, func, select
from sqlalchemy.orm import Session

from .tables import DriftRunRow, EvaluationRow


@dataclass(frozen=True, slots=True)
class DriftRunSummary:
    judge: str
    computed_at: datetime
    baseline_ready: bool
    held_back: bool
    summary: dict[str, Any]


def save(
    session: Session,
    judge: str,
    computed_at: datetime,
    baseline_ready: bool,
    held_back: bool,
    summary: dict[str, Any],
) -> None:
    """Replace ``judge``'s last run with this one."""
    session.execute(delete(DriftRunRow).where(DriftRunRow.judge == judge))
    session.add(
        DriftRunRow(
            judge=judge,
            computed_at=computed_at,
            baseline_ready=baseline_ready,
            held_back=held_back,
            summary=summary,
        )
    )


def load(session: Session, judge: str) -> DriftRunSummary | None:
    row = session.scalars(select(DriftRunRow).where(DriftRunRow.judge == judge)).first()
    if row is None:
        return None
    return DriftRunSummary(
        row.judge, row.computed_at, row.baseline_ready, row.held_back, dict(row.summary)
    )


def scored_since(session: Session, judge: str, at: datetime) -> bool:
    """Whether ``judge`` stored an evaluation after ``at`` (the run no longer sees it all)."""
    newest = session.scalar(
        select(func.max(EvaluationRow.created_at)).where(EvaluationRow.judge == judge)
    )
    return newest is not None and newest > at
