"""Counts kept beside the records, so they outlive them: what the sampler kept and
dropped, retention's daily roll-ups and the cumulative counters ``/metrics`` serves."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import (
    Float,
    Integer,
    String,
    UniqueConstraint,
)
from sqlalchemy.orm import Mapped, mapped_column

from .base import Base, JSONType, UTCDateTime


class SamplingCountRow(Base):
    __tablename__ = "sampling_counts"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    hour: Mapped[datetime] = mapped_column(UTCDateTime())
    segment_key: Mapped[str] = mapped_column(String(500))
    segment: Mapped[dict[str, str]] = mapped_column(JSONType)
    reason: Mapped[str] = mapped_column(String(100))
    count: Mapped[int] = mapped_column(Integer)

    __table_args__ = (UniqueConstraint("hour", "segment_key", "reason"),)


class DroppedTraceRow(Base):
    __tablename__ = "dropped_traces"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    trace_id: Mapped[str] = mapped_column(String(32), index=True)
    reason: Mapped[str] = mapped_column(String(100))
    segment: Mapped[dict[str, str]] = mapped_column(JSONType)
    at: Mapped[datetime] = mapped_column(UTCDateTime(), index=True)


class SegmentDailyRow(Base):
    """Per-segment daily aggregates, kept when retention deletes the records."""

    __tablename__ = "segment_daily"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    day: Mapped[datetime] = mapped_column(UTCDateTime())
    segment_key: Mapped[str] = mapped_column(String(500))
    segment: Mapped[dict[str, str]] = mapped_column(JSONType)
    records: Mapped[int] = mapped_column(Integer)
    scored: Mapped[int] = mapped_column(Integer)
    unsupported: Mapped[int] = mapped_column(Integer)
    faithfulness_sum: Mapped[float] = mapped_column(Float)

    __table_args__ = (UniqueConstraint("day", "segment_key"),)


class SegmentMetricsRow(Base):
    """Cumulative counters per segment and judge, for Prometheus-style scraping."""

    __tablename__ = "segment_metrics"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    segment_key: Mapped[str] = mapped_column(String(500))
    segment: Mapped[dict[str, str]] = mapped_column(JSONType)
    judge: Mapped[str] = mapped_column(String(200))
    evaluations: Mapped[int] = mapped_column(Integer)
    scored: Mapped[int] = mapped_column(Integer)
    unsupported: Mapped[int] = mapped_column(Integer)
    critical_unsupported: Mapped[int] = mapped_column(Integer)
    judge_errors: Mapped[int] = mapped_column(Integer)
    faithfulness_sum: Mapped[float] = mapped_column(Float)
    buckets: Mapped[list[int]] = mapped_column(JSONType)
    # Per relevance measure: cumulative bucket counts, sum and count (null: none yet).
    relevance: Mapped[dict[str, Any] | None] = mapped_column(JSONType, nullable=True)

    __table_args__ = (UniqueConstraint("segment_key", "judge"),)
