"""Drift baselines as stored: frozen once per judge configuration, one row per segment,
each with the window it was frozen over (a tenant seen late freezes over its own)."""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from ..model import Baseline, FrozenBaselines
from ._dialect import insert_for
from .tables import BaselineRow


def load_baselines(session: Session, judge: str) -> FrozenBaselines | None:
    """``judge``'s frozen baselines; None before they are frozen."""
    rows = list(session.scalars(select(BaselineRow).where(BaselineRow.judge == judge)))
    if not rows:
        return None
    segments = {
        row.segment_key: Baseline(
            row.records,
            row.unsupported,
            row.critical,
            row.spread,
            row.critical_spread,
            row.cited,
            row.miscited,
            row.citation_spread,
            row.measured,
            row.missed,
            row.retrieval_spread,
        )
        for row in rows
    }
    windows = {row.segment_key: (row.window_start, row.window_end) for row in rows}
    return FrozenBaselines.of(segments, windows)


def save_baselines(session: Session, judge: str, frozen: FrozenBaselines) -> None:
    """Freeze ``judge``'s baselines; a segment already frozen keeps what it has."""
    now = datetime.now(UTC)
    rows = [
        {
            "judge": judge,
            "segment_key": key,
            "records": baseline.records,
            "unsupported": baseline.unsupported,
            "critical": baseline.critical,
            "spread": baseline.spread,
            "critical_spread": baseline.critical_spread,
            "cited": baseline.cited,
            "miscited": baseline.miscited,
            "citation_spread": baseline.citation_spread,
            "measured": baseline.measured,
            "missed": baseline.missed,
            "retrieval_spread": baseline.retrieval_spread,
            "window_start": frozen.window_of(key)[0],
            "window_end": frozen.window_of(key)[1],
            "created_at": now,
        }
        for key, baseline in frozen.segments.items()
    ]
    if rows:
        session.execute(
            insert_for(session, BaselineRow).on_conflict_do_nothing(
                index_elements=["judge", "segment_key"]
            ),
            rows,
        )
