"""Cumulative per-segment counters, updated as evaluations are written, read by /metrics;
and the relevance histograms of those segments, read from the evaluations stored."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from sqlalchemy import ColumnElement, case, func, select, update
from sqlalchemy.orm import Session

from ..model import Judgement, partition_label, segment_key, segments_of
from ._dialect import insert_for, is_postgresql
from .records import PENDING
from .tables import EvaluationRow, JudgeUsageRow, RecordRow, SegmentMetricsRow

# Upper bounds of the strict-faithfulness histogram buckets (cumulative, as Prometheus).
BUCKETS = (0.25, 0.5, 0.75, 0.9, 0.99, 1.0)
# Upper bounds of the context- and answer-relevance histogram buckets.
RELEVANCE_BUCKETS = (0.1, 0.25, 0.5, 0.75, 0.9, 1.0)
RELEVANCE = ("context_relevance", "answer_relevance")


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
    add_relevance(session, segments)
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


def add_relevance(session: Session, segments: Sequence[dict[str, Any]]) -> None:
    """Give each segment row (``segment``, ``judge``) its ``relevance``: per measure, the
    cumulative bucket counts, sum and count over the evaluations stored that measured it.

    Only the segments and judges the counters hold are filled, so the label sets stay
    theirs. One query counts by judge and label set; each set's counts go to the
    segments ``segments_of`` gives it, as the worker's counters do.
    """
    rows = {(segment_key(row["segment"]), row["judge"]): row for row in segments}
    for row in segments:
        row["relevance"] = {
            name: {"buckets": [0] * len(RELEVANCE_BUCKETS), "sum": 0.0, "count": 0}
            for name in RELEVANCE
        }
    if not rows:
        return
    names = sorted({name for row in segments for name in row["segment"]})
    postgresql = is_postgresql(session)
    if postgresql:
        # A label is cheap to read out of binary JSON; a sort on whole label sets spills.
        keys = [RecordRow.labels[name].as_string() for name in names]
    else:
        # SQLite parses JSON text at every read: label sets are grouped as text, then read
        # once per group.
        keys = [RecordRow.labels]
    measured: list[ColumnElement[Any]] = []
    for name in RELEVANCE:
        column = getattr(EvaluationRow, name)
        measured += [func.sum(case((column <= bound, 1), else_=0)) for bound in RELEVANCE_BUCKETS]
        measured += [func.sum(column), func.count(column)]
    query = (
        select(EvaluationRow.judge, *(k.label(f"key_{i}") for i, k in enumerate(keys)), *measured)
        .join(RecordRow, RecordRow.id == EvaluationRow.record_id)
        .where(EvaluationRow.judge.in_(sorted({judge for _, judge in rows})))
        .where(
            EvaluationRow.context_relevance.is_not(None)
            | EvaluationRow.answer_relevance.is_not(None)
        )
        # By the names: the expressions hold bound values, which PostgreSQL would not
        # match between the select list and the GROUP BY.
        .group_by(EvaluationRow.judge, *(f"key_{i}" for i in range(len(keys))))
    )
    width = len(RELEVANCE_BUCKETS) + 2
    for judge, *values in session.execute(query):
        found, counts = values[: len(keys)], values[len(keys) :]
        labels = dict(zip(names, found, strict=True)) if postgresql else found[0]
        for segment in segments_of(labels, names, partition_label(names)):
            counted = rows.get((segment_key(segment), judge))
            if counted is None:
                continue
            for i, name in enumerate(RELEVANCE):
                *buckets, total, count = counts[i * width : (i + 1) * width]
                histogram = counted["relevance"][name]
                histogram["buckets"] = [
                    a + int(b or 0) for a, b in zip(histogram["buckets"], buckets, strict=True)
                ]
                histogram["sum"] += float(total or 0.0)
                histogram["count"] += int(count)
