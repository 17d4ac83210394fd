"""Retention: old records roll up into daily segment aggregates, then go."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from ..model import partition_label, segment_key, segments_of
from ._dialect import insert_for, skip_locked
from .evaluations import to_judgement
from .records import PENDING
from .tables import (
    DroppedTraceRow,
    EvaluationRow,
    FeedbackRow,
    RecordDocumentRow,
    RecordRow,
    SamplingCountRow,
    SegmentDailyRow,
)


def apply_retention(
    session: Session,
    cutoff: datetime,
    dimensions: Sequence[str],
    judge: str,
    limit: int | None = None,
) -> int:
    """Roll records received before ``cutoff`` up into daily segment aggregates (by the
    day they started), then delete them with their evaluations, claims, feedback and
    document rows. Returns records deleted.

    Age is the time faithmon received a record, never the app's start time: a
    record from a wrong clock is neither deleted at once nor kept forever.

    A record still waiting for the judge (pending) or held by a worker (leased) is
    kept whatever its age: it has not been judged yet, and a worker holding it would
    lose the judge call it already paid for.
    Sampling counts and dropped traces older than ``cutoff`` go too; drift baselines
    and alerts are kept (they hold no content and stay small).
    """
    # Written first on purpose: on SQLite the first write takes the database's write
    # lock, so no one can lease or rescore a record between the select below and
    # the deletes.
    session.execute(delete(DroppedTraceRow).where(DroppedTraceRow.at < cutoff))
    session.execute(delete(SamplingCountRow).where(SamplingCountRow.hour < cutoff))
    query = select(
        RecordRow.id,
        RecordRow.trace_id,
        RecordRow.started_at,
        RecordRow.labels,
        RecordRow.status,
    ).where(
        RecordRow.ingested_at < cutoff,
        RecordRow.status != PENDING,
        # Any owner, even past its lease: that worker may still settle the record.
        RecordRow.lease_owner.is_(None),
    )
    if limit is not None:
        # Oldest first, a bounded batch per transaction: no lock is held for long.
        query = query.order_by(RecordRow.ingested_at, RecordRow.id).limit(limit)
    # Locked until commit, so a concurrent settle or rescore cannot change a row
    # between the roll-up and the delete; rows another transaction holds wait for
    # the next run.
    rows = session.execute(skip_locked(session, query)).all()
    if not rows:
        return 0
    ids = [row.id for row in rows]
    evaluations = {
        e.record_id: to_judgement(e)
        for e in session.scalars(
            select(EvaluationRow).where(
                EvaluationRow.record_id.in_(ids), EvaluationRow.judge == judge
            )
        )
    }
    totals: dict[tuple[datetime, str], list[Any]] = {}
    for row in rows:
        day = row.started_at.replace(hour=0, minute=0, second=0, microsecond=0)
        evaluation = evaluations.get(row.id)
        faithfulness = evaluation.faithfulness if evaluation is not None else None
        scored = faithfulness is not None
        unsupported = evaluation is not None and evaluation.unsupported
        for segment in segments_of(row.labels, dimensions, partition_label(dimensions)):
            key = segment_key(segment)
            total = totals.setdefault((day, key), [segment, 0, 0, 0, 0.0])
            total[1] += 1
            total[2] += int(scored)
            total[3] += int(unsupported)
            total[4] += faithfulness or 0.0
    for (day, key), (segment, records, scored_n, unsupported_n, total_f) in totals.items():
        statement = insert_for(session, SegmentDailyRow).values(
            day=day,
            segment_key=key,
            segment=segment,
            records=records,
            scored=scored_n,
            unsupported=unsupported_n,
            faithfulness_sum=total_f,
        )
        session.execute(
            statement.on_conflict_do_update(
                index_elements=["day", "segment_key"],
                set_={
                    "records": SegmentDailyRow.records + statement.excluded.records,
                    "scored": SegmentDailyRow.scored + statement.excluded.scored,
                    "unsupported": SegmentDailyRow.unsupported + statement.excluded.unsupported,
                    "faithfulness_sum": SegmentDailyRow.faithfulness_sum
                    + statement.excluded.faithfulness_sum,
                },
            )
        )
    for start in range(0, len(ids), 500):
        batch = ids[start : start + 500]
        traces = [row.trace_id for row in rows[start : start + 500]]
        session.execute(delete(EvaluationRow).where(EvaluationRow.record_id.in_(batch)))
        session.execute(delete(FeedbackRow).where(FeedbackRow.trace_id.in_(traces)))
        session.execute(delete(RecordDocumentRow).where(RecordDocumentRow.record_id.in_(batch)))
        session.execute(delete(RecordRow).where(RecordRow.id.in_(batch)))
    return len(ids)


def segment_daily(session: Session) -> list[dict[str, Any]]:
    return [
        {
            "day": r.day.date().isoformat(),
            "segment": dict(r.segment),
            "records": r.records,
            "scored": r.scored,
            "unsupported": r.unsupported,
            "faithfulness_sum": r.faithfulness_sum,
        }
        for r in session.scalars(
            select(SegmentDailyRow).order_by(SegmentDailyRow.day, SegmentDailyRow.segment_key)
        )
    ]
