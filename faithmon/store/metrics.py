"""Cumulative per-segment counters, updated as evaluations are written, read by /metrics."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from ..model import Judgement, segment_key, segments_of
from ._dialect import insert_for
from .records import PENDING
from .tables import JudgeUsageRow, RecordRow, SegmentMetricsRow

# Upper bounds of the strict-faithfulness histogram buckets (cumulative, as Prometheus).
BUCKETS = (0.25, 0.5, 0.75, 0.9, 0.99, 1.0)


def count_evaluation(
    session: Session,
    labels: Mapping[str, str],
    dimensions: Sequence[str],
    judgement: Judgement,
) -> None:
    """Add one evaluation to the overall segment and to each of its labelled segments."""
    score = judgement.faithfulness
    buckets = [int(score is not None and score <= bound) for bound in BUCKETS]
    for segment in segments_of(labels, dimensions):
        values = {
            "segment_key": segment_key(segment),
            "segment": segment,
            "judge": judgement.judge,
            "evaluations": 1,
            "scored": int(score is not None),
            "unsupported": int(judgement.unsupported),
            "critical_unsupported": int(judgement.critical_unsupported),
            "judge_errors": int(judgement.status == "judge_error"),
            "faithfulness_sum": score or 0.0,
            "buckets": buckets,
        }
        statement = insert_for(session, SegmentMetricsRow).values(values)
        row = session.execute(
            statement.on_conflict_do_update(
                index_elements=["segment_key", "judge"],
                set_={
                    name: getattr(SegmentMetricsRow, name) + getattr(statement.excluded, name)
                    for name in (
                        "evaluations",
                        "scored",
                        "unsupported",
                        "critical_unsupported",
                        "judge_errors",
                        "faithfulness_sum",
                    )
                },
            ).returning(SegmentMetricsRow.id, SegmentMetricsRow.evaluations)
        ).one()
        if row.evaluations > 1:  # JSON columns cannot be added in SQL portably
            existing = session.get_one(SegmentMetricsRow, row.id)
            existing.buckets = [a + b for a, b in zip(existing.buckets, buckets, strict=True)]


def snapshot(session: Session) -> dict[str, Any]:
    """Everything /metrics shows: segment counters, queue depth, judge usage."""
    segments = [
        {
            "segment": dict(row.segment),
            "judge": row.judge,
            "evaluations": row.evaluations,
            "scored": row.scored,
            "unsupported": row.unsupported,
            "critical_unsupported": row.critical_unsupported,
            "judge_errors": row.judge_errors,
            "faithfulness_sum": row.faithfulness_sum,
            "buckets": list(row.buckets),
        }
        for row in session.scalars(select(SegmentMetricsRow).order_by(SegmentMetricsRow.id))
    ]
    statuses = dict(
        session.execute(select(RecordRow.status, func.count()).group_by(RecordRow.status)).all()
    )
    usage = session.execute(
        select(
            JudgeUsageRow.judge,
            func.sum(JudgeUsageRow.calls),
            func.sum(JudgeUsageRow.prompt_tokens),
            func.sum(JudgeUsageRow.completion_tokens),
        ).group_by(JudgeUsageRow.judge)
    ).all()
    return {
        "segments": segments,
        "queue_depth": int(statuses.get(PENDING, 0)),
        "records": {str(k): int(v) for k, v in statuses.items()},
        "judge_usage": [
            {
                "judge": j,
                "calls": int(c or 0),
                "prompt_tokens": int(p or 0),
                "completion_tokens": int(o or 0),
            }
            for j, c, p, o in usage
        ],
    }
