"""Cumulative per-segment counters, updated as evaluations are written, read by /metrics:
the faithfulness and relevance histograms among them, so a scrape reads one row per
segment and judge, never the evaluations."""

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
        measured = _measured(judgement)
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
                {"segment": segment, "buckets": [0] * len(BUCKETS), "relevance": _empty()}
                | dict.fromkeys(_COUNTERS, 0),
            )
            for name, value in zip(_COUNTERS, add, strict=True):
                total[name] += value
            total["buckets"] = [a + b for a, b in zip(total["buckets"], buckets, strict=True)]
            total["relevance"] = _sum(total["relevance"], measured)
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
                SegmentMetricsRow.id,
                SegmentMetricsRow.evaluations,
                SegmentMetricsRow.buckets,
                SegmentMetricsRow.relevance,
            )
        ).one()
        if row.evaluations > total["evaluations"]:
            # The row was there: its histograms are the old ones (JSON columns cannot be
            # added in SQL portably), and the upsert holds its lock until commit.
            buckets = [a + b for a, b in zip(row.buckets, total["buckets"], strict=True)]
            relevance = _sum(_read(row.relevance), total["relevance"])
            session.execute(
                update(SegmentMetricsRow)
                .where(SegmentMetricsRow.id == row.id)
                .values(buckets=buckets, relevance=relevance)
            )


def _empty() -> dict[str, dict[str, Any]]:
    return {
        name: {"buckets": [0] * len(RELEVANCE_BUCKETS), "sum": 0.0, "count": 0}
        for name in RELEVANCE
    }


def _read(stored: Any) -> dict[str, dict[str, Any]]:
    """A stored relevance total; a row from before it was kept (null) counts from zero."""
    found = _empty()
    if isinstance(stored, dict):
        for name in RELEVANCE:
            kept = stored.get(name)
            if isinstance(kept, dict) and len(kept.get("buckets", ())) == len(RELEVANCE_BUCKETS):
                found[name] = {
                    "buckets": [int(b) for b in kept["buckets"]],
                    "sum": float(kept.get("sum", 0.0)),
                    "count": int(kept.get("count", 0)),
                }
    return found


def _measured(judgement: Judgement) -> dict[str, dict[str, Any]]:
    """One evaluation's contribution: each measure it has in its buckets (cumulative)."""
    found = _empty()
    relevance = judgement.relevance
    for name in RELEVANCE:
        value = getattr(relevance, name) if relevance is not None else None
        if value is not None:
            found[name] = {
                "buckets": [int(value <= bound) for bound in RELEVANCE_BUCKETS],
                "sum": float(value),
                "count": 1,
            }
    return found


def _sum(
    a: Mapping[str, Mapping[str, Any]], b: Mapping[str, Mapping[str, Any]]
) -> dict[str, dict[str, Any]]:
    return {
        name: {
            "buckets": [x + y for x, y in zip(a[name]["buckets"], b[name]["buckets"], strict=True)],
            "sum": a[name]["sum"] + b[name]["sum"],
            "count": a[name]["count"] + b[name]["count"],
        }
        for name in RELEVANCE
    }


def snapshot(session: Session) -> dict[str, Any]:
    """Everything /metrics shows: segment counters, queue depth, judge usage."""
    merged: dict[tuple[str, str], dict[str, Any]] = {}
    for row in session.scalars(select(SegmentMetricsRow).order_by(SegmentMetricsRow.id)):
        # Grouped by the key made now from the stored labels, not the stored key: a row
        # keyed before keys were escaped (``route=a,b``) and the one kept since
        # (``route=a%2Cb``) are one segment, and /metrics must show it as one series.
        total = merged.setdefault(
            (segment_key(row.segment), row.judge),
            {
                "segment": dict(row.segment),
                "judge": row.judge,
                "buckets": [0] * len(BUCKETS),
                "relevance": _empty(),
            }
            | dict.fromkeys(_COUNTERS, 0),
        )
        for name in _COUNTERS:
            total[name] += getattr(row, name)
        total["buckets"] = [a + b for a, b in zip(total["buckets"], row.buckets, strict=True)]
        total["relevance"] = _sum(total["relevance"], _read(row.relevance))
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
