"""Drift thresholds set by `faithmon drift calibrate`."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from .tables import DriftThresholdRow


def load(session: Session) -> dict[str, float]:
    """detector key → threshold."""
    return {row.detector: row.threshold for row in session.scalars(select(DriftThresholdRow))}


def facts(session: Session) -> dict[str, tuple[float, dict[str, Any], datetime]]:
    return {
        row.detector: (row.threshold, dict(row.facts), row.created_at)
        for row in session.scalars(select(DriftThresholdRow))
    }


def replace_all(
    session: Session, thresholds: Mapping[str, tuple[float, Mapping[str, Any]]]
) -> None:
    """Calibration replaces every stored threshold: a segment it no longer sees loses its own."""
    session.execute(delete(DriftThresholdRow))
    now = datetime.now(UTC)
    session.add_all(
        DriftThresholdRow(detector=key, threshold=h, facts=dict(f), created_at=now)
        for key, (h, f) in thresholds.items()
    )


def clear(session: Session) -> None:
    session.execute(delete(DriftThresholdRow))
