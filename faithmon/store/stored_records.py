"""Stored records as people read them: each with its evaluations and feedback."""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import select
from sqlalchemy.orm import Session

from ..model import Feedback, Judgement, StoredRecord
from .evaluations import to_judgement
from .records import to_record
from .tables import EvaluationRow, FeedbackRow, RecordRow


def _evaluations(session: Session, rows: Sequence[RecordRow]) -> dict[int, list[Judgement]]:
    """record id → its evaluations, oldest first."""
    found: dict[int, list[Judgement]] = {}
    for evaluation in session.scalars(
        select(EvaluationRow)
        .where(EvaluationRow.record_id.in_([r.id for r in rows]))
        .order_by(EvaluationRow.id)
    ):
        found.setdefault(evaluation.record_id, []).append(to_judgement(evaluation))
    return found


def _feedback(session: Session, rows: Sequence[RecordRow]) -> dict[str, list[Feedback]]:
    """trace id → its feedback, oldest first."""
    found: dict[str, list[Feedback]] = {}
    for item in session.scalars(
        select(FeedbackRow)
        .where(FeedbackRow.trace_id.in_([r.trace_id for r in rows]))
        .order_by(FeedbackRow.given_at, FeedbackRow.id)
    ):
        found.setdefault(item.trace_id, []).append(
            Feedback(trace_id=item.trace_id, value=item.value, at=item.given_at)
        )
    return found


def load_traces(session: Session, trace_ids: Sequence[str]) -> dict[str, StoredRecord]:
    """The stored records with these trace ids, each with its evaluations and feedback
    (oldest first)."""
    if not trace_ids:
        return {}
    rows = list(session.scalars(select(RecordRow).where(RecordRow.trace_id.in_(trace_ids))))
    evaluations = _evaluations(session, rows)
    feedback = _feedback(session, rows)
    return {
        row.trace_id: StoredRecord(
            id=row.id,
            record=to_record(row),
            status=row.status,
            evaluations=tuple(evaluations.get(row.id, ())),
            feedback=tuple(feedback.get(row.trace_id, ())),
        )
        for row in rows
    }
