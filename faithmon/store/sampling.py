"""Sampling decisions as stored: hourly counts per segment and reason, and dropped traces.

The store keeps counts only; the sampling weights drift needs are computed from them
in ``drift.weights``.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from ..model import DroppedTrace, SamplingTally, segment_key
from ._dialect import insert_for
from .tables import DroppedTraceRow, RecordRow, SamplingCountRow


def save_sampling(
    session: Session, tallies: Sequence[SamplingTally], dropped: Sequence[DroppedTrace]
) -> None:
    """Add hourly counts (several receivers add to the same rows) and store drops."""
    for tally in tallies:
        statement = insert_for(session, SamplingCountRow).values(
            hour=tally.hour,
            segment_key=segment_key(tally.segment),
            segment=dict(tally.segment),
            reason=tally.reason,
            count=tally.count,
        )
        session.execute(
            statement.on_conflict_do_update(
                index_elements=["hour", "segment_key", "reason"],
                set_={"count": SamplingCountRow.count + statement.excluded.count},
            )
        )
    session.add_all(
        DroppedTraceRow(trace_id=d.trace_id, reason=d.reason, segment=dict(d.segment), at=d.at)
        for d in dropped
    )


def sampling_counts(
    session: Session, since: datetime | None = None, reasons: Collection[str] | None = None
) -> list[SamplingTally]:
    """The hourly counts (from ``since``, of ``reasons`` only when given)."""
    query = select(SamplingCountRow).order_by(
        SamplingCountRow.hour, SamplingCountRow.segment_key, SamplingCountRow.reason
    )
    if since is not None:
        query = query.where(SamplingCountRow.hour >= since)
    if reasons is not None:
        query = query.where(SamplingCountRow.reason.in_(reasons))
    return [
        SamplingTally(row.hour, dict(row.segment), row.reason, row.count)
        for row in session.scalars(query)
    ]


def decision_for(session: Session, trace_id: str) -> tuple[str, Mapping[str, Any]] | None:
    """(where, facts) for a trace faithmon has seen: a stored record or a stored drop."""
    record = session.scalars(select(RecordRow).where(RecordRow.trace_id == trace_id)).first()
    if record is not None:
        return "kept", {
            "reason": record.sample_reason,
            "labels": dict(record.labels),
            "status": record.status,
            "started_at": record.started_at.isoformat(),
        }
    dropped = session.scalars(
        select(DroppedTraceRow).where(DroppedTraceRow.trace_id == trace_id)
    ).first()
    if dropped is not None:
        return "dropped", {
            "reason": dropped.reason,
            "segment": dict(dropped.segment),
            "at": dropped.at.isoformat(),
        }
    return None
