"""Drift detection's rows: the frozen baselines, the detectors' folded state, the last
run's readings and the calibrated thresholds."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import (
    Boolean,
    Float,
    Integer,
    String,
    UniqueConstraint,
)
from sqlalchemy.orm import Mapped, mapped_column

from .base import Base, JSONType, UTCDateTime


class BaselineRow(Base):
    """One segment's frozen baseline, per judge configuration (judges differ in strictness)."""

    __tablename__ = "drift_baselines"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    judge: Mapped[str] = mapped_column(String(200))
    segment_key: Mapped[str] = mapped_column(String(500))
    records: Mapped[int] = mapped_column(Integer)
    unsupported: Mapped[int] = mapped_column(Integer)
    critical: Mapped[int] = mapped_column(Integer)
    spread: Mapped[float] = mapped_column(Float)
    critical_spread: Mapped[float] = mapped_column(Float)
    # The citation stream's: records whose answer cites (0: the stream has no baseline here).
    cited: Mapped[int] = mapped_column(Integer, default=0)
    miscited: Mapped[int] = mapped_column(Integer, default=0)
    citation_spread: Mapped[float] = mapped_column(Float, default=0.0)
    # The retrieval stream's: records with a measured context relevance (0: none here).
    measured: Mapped[int] = mapped_column(Integer, default=0)
    missed: Mapped[int] = mapped_column(Integer, default=0)
    retrieval_spread: Mapped[float] = mapped_column(Float, default=0.0)
    window_start: Mapped[datetime] = mapped_column(UTCDateTime())
    window_end: Mapped[datetime] = mapped_column(UTCDateTime())
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())

    __table_args__ = (UniqueConstraint("judge", "segment_key"),)


class DriftStateRow(Base):
    """The drift detectors' state for a judge configuration, as of its last folded
    evaluation (see :mod:`faithmon.drift.state`): the next run reads only newer ones."""

    __tablename__ = "drift_state"

    judge: Mapped[str] = mapped_column(String(200), primary_key=True)
    fingerprint: Mapped[str] = mapped_column(String(64))
    """What the state was folded against (settings, baselines, trust): another is a rebuild."""
    watermark: Mapped[int] = mapped_column(Integer)
    state: Mapped[dict[str, Any]] = mapped_column(JSONType)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime())


class DriftRunRow(Base):
    """The last drift run of a judge configuration: every detector's reading, as the read
    API and the dashboard show them (see :mod:`faithmon.drift.summary`)."""

    __tablename__ = "drift_runs"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    judge: Mapped[str] = mapped_column(String(200), unique=True)
    computed_at: Mapped[datetime] = mapped_column(UTCDateTime())
    baseline_ready: Mapped[bool] = mapped_column(Boolean)
    held_back: Mapped[bool] = mapped_column(Boolean)
    summary: Mapped[dict[str, Any]] = mapped_column(JSONType)


class DriftThresholdRow(Base):
    """A detector's threshold set by `faithmon drift calibrate`, with the facts behind it."""

    __tablename__ = "drift_thresholds"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    detector: Mapped[str] = mapped_column(String(600), unique=True)
    threshold: Mapped[float] = mapped_column(Float)
    facts: Mapped[dict[str, Any]] = mapped_column(JSONType)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())
