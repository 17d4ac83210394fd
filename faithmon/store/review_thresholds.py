"""Calibrated thresholds as stored: each calibration is a new version; the newest per
(judge configuration, segment) is the one in use. A threshold of another configuration
than the one scoring now is stale: it says nothing of the current judge's scores."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from ..model.review import Threshold
from .tables import EvaluationRow, RecordRow, ReviewThresholdRow


def save_threshold(
    session: Session,
    judge: str,
    segment_key: str,
    found: Threshold,
    dataset_version: str,
    now: datetime,
) -> None:
    """Keep a calibrated threshold as a new version (the newest is the one in use), with
    the number of reviewed answers it rests on (``n``). A threshold outside 0 to 1 would
    pass or fail every answer: it is refused."""
    if not 0.0 <= found.threshold <= 1.0:
        raise ValueError(f"threshold {found.threshold} is outside 0 to 1: not stored")
    session.add(
        ReviewThresholdRow(
            judge=judge,
            segment_key=segment_key,
            threshold=found.threshold,
            guard_low=found.guard_low,
            guard_high=found.guard_high,
            figures={
                "false_acceptance": found.false_acceptance,
                "false_rejection": found.false_rejection,
                "n": found.n,
            },
            rationale=found.rationale,
            dataset_version=dataset_version,
            created_at=now,
        )
    )


def clear_thresholds(session: Session) -> int:
    """Remove every stored threshold, of every judge configuration; returns how many
    versions were removed. Until the next calibration no threshold gates an answer."""
    result = session.execute(delete(ReviewThresholdRow))
    return int(result.rowcount or 0)  # type: ignore[attr-defined]


def latest_thresholds(session: Session, judge: str) -> dict[str, dict[str, Any]]:
    """The judge's threshold in use per segment key ("" overall), with when and why."""
    rows = session.scalars(
        select(ReviewThresholdRow)
        .where(ReviewThresholdRow.judge == judge)
        .order_by(ReviewThresholdRow.segment_key, ReviewThresholdRow.id)
    )
    return {
        row.segment_key: {
            "threshold": row.threshold,
            "guard_low": row.guard_low,
            "guard_high": row.guard_high,
            "rationale": row.rationale,
            "dataset_version": row.dataset_version,
            "created_at": row.created_at.isoformat(),
            **row.figures,
        }
        for row in rows
    }


def latest_of_every_judge(session: Session) -> dict[str, dict[str, dict[str, Any]]]:
    """Per judge configuration, its thresholds in use (as :func:`latest_thresholds`)."""
    judges = session.scalars(select(ReviewThresholdRow.judge).distinct()).all()
    return {judge: latest_thresholds(session, judge) for judge in sorted(judges)}


def scores_by_trace(session: Session, trace_ids: Sequence[str]) -> dict[str, dict[str, float]]:
    """Per judge configuration, its strict score of each of ``trace_ids`` it scored: what
    calibrates a judge on answers people reviewed under another (after a rescore)."""
    out: dict[str, dict[str, float]] = {}
    ids = list(trace_ids)
    for start in range(0, len(ids), 500):
        rows = session.execute(
            select(EvaluationRow.judge, RecordRow.trace_id, EvaluationRow.faithfulness)
            .join(RecordRow, RecordRow.id == EvaluationRow.record_id)
            .where(
                RecordRow.trace_id.in_(ids[start : start + 500]),
                EvaluationRow.faithfulness.is_not(None),
            )
        ).all()
        for judge, trace_id, score in rows:
            out.setdefault(judge, {})[trace_id] = float(score or 0.0)
    return out
