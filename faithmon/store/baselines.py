"""Drift baselines as stored: frozen per judge configuration and segment."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from .repo import insert_for, utc_now
from .tables import (
    BaselineRow,
)


def load_baselines(
    session: Session, judge: str
) -> dict[str, tuple[int, int, int, float, float, datetime, datetime]]:
    """segment key → (records, unsupported, critical, spread, critical spread, window
    start, window end) for ``judge``."""
    query = select(BaselineRow).where(BaselineRow.judge == judge)
    return {
        row.segment_key: (
            row.records,
            row.unsupported,
            row.critical,
            row.spread,
            row.critical_spread,
            row.window_start,
            row.window_end,
        )
        for row in session.scalars(query)
    }


def save_baselines(
    session: Session,
    judge: str,
    baselines: Mapping[str, tuple[int, int, int, float, float]],
    window_start: datetime,
    window_end: datetime,
) -> None:
    now = utc_now()
    rows = [
        {
            "judge": judge,
            "segment_key": key,
            "records": records,
            "unsupported": unsupported,
            "critical": critical,
            "spread": spread,
            "critical_spread": critical_spread,
            "window_start": window_start,
            "window_end": window_end,
            "created_at": now,
        }
        for key, (records, unsupported, critical, spread, critical_spread) in baselines.items()
    ]
    if rows:
        session.execute(
            insert_for(session, BaselineRow).on_conflict_do_nothing(
                index_elements=["judge", "segment_key"]
            ),
            rows,
        )
