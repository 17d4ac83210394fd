"""Cumulative per-segment counters, updated as evaluations are written, read by /metrics."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from sqlalchemy import func, select, update
from sqlalchemy.orm import Session

from ..model import Judgement, partition_label, segment_key, segments_of
from ._dialect import insert_for
from .records import PENDING
from .tables import JudgeUsageRow, RecordRow, SegmentMetricsRow

# Upper bounds of the strict-faithfulness histogram buckets (cumulative, as Prometheus).
BUCKETS = (0.25, 0.5, 0.75, 0.9, 0.99, 1.0)


_COUNTERS = (
    "evaluations",
    "scored",
    "unsupported",
    "critical_unsupported",
    "judge_errors",
    "faithfulness_sum",
)


def count_evaluations(
    session: Session,
    evaluations: Iterable[tuple[Mapping[str, str], Judgement]],
    dimensions: Sequence[str],
) -> None:
    """Add a batch of evaluations (each with its record's labels) to the overall segment
    and to each of their labelled segments: one upsert per segment and judge the batch
    touches, in key order, so workers settling batches at once never wait on each other
    in a cycle."""
    totals: dict[tuple[str, str], dict[str, Any]] = {}
    for labels, judgement in evaluations:
        score = judgement.faithfulness
        buckets = [int(score is not None and score <= bound) for bound in BUCKETS]
        add = (
            1,
            int(score is not None),
            int(judgement.unsupported),
            int(judgement.critical_unsupported),
            int(judgement.status == "judge_error"),
            score or 0.0,
        )
        for segment in segments_of(labels, dimensions, partition_label(dimensions)):
            total = totals.setdefault(
                (segment_key(segment), judgement.judge),
                {"segment": segment, "buckets": [0] * len(BUCKETS)} | dict.fromkeys(_COUNTERS, 0),
            )
            for name, value in zip(_COUNTERS, add, strict=True):
                total[name] += value
            total["buckets"] = [a + b for a, b in zip(total["buckets"], buckets, strict=True)]
    for (key, judge), total in sorted(totals.items(), key=lambda item: item[0]):
        statement = insert_for(session, SegmentMetricsRow).values(
            segment_key=key, judge=judge, **total
        )
        row = session.execute(
            statement.on_conflict_do_update(
                index_elements=["segment_key", "judge"],
                set_={
                    name: getattr(SegmentMetricsRow, name) + getattr(statement.excluded, name)
                    for name in _COUNTERS
                },
            ).returning(
                SegmentMetricsRow.id, SegmentMetricsRow.evaluations, SegmentMetricsRow.buckets
            )
        ).one()
        if row.evaluations > total["evaluations"]:
            # The row was there: its buckets are the old ones (JSON columns cannot be
            # added in SQL portably), and the upsert holds its lock until commit.
            buckets = [a + b for a, b in zip(row.buckets, total["buckets"], strict=True)]
            session.execute(
                update(SegmentMetricsRow)
                .where(SegmentMetricsRow.id == row.id)
                .values(buckets=buckets)
            )


def snapshot(session: Session) -> dict[str, Any]:
    """Everything /metrics shows: segment counters, queue depth, judge usage."""
    merged: dict[tuple[str, str], dict[str, Any]] = {}
    for row in session.scalars(select(SegmentMetricsRow).order_by(SegmentMetricsRow.id)):
        # Grouped by the key made now from the stored labels, not the stored key: a row
        # keyed before keys were escaped (``route=a,b``) and the one kept since
        # (``route=a%2Cb``) are one segment, and /metrics must show it as one series.
        total = merged.setdefault(
            (segment_key(row.segment), row.judge),
            {"segment": dict(row.segment), "judge": row.judge, "buckets": [0] * len(BUCKETS)}
            | dict.fromkeys(_COUNTERS, 0),
        )
        for name in _COUNTERS:
            total[name] += getattr(row, name)
        total["buckets"] = [a + b for a, b in zip(total["buckets"], row.buckets, strict=True)]
    segments = list(merged.values())
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
