"""The review loop's tables: the queue's items, people's claim labels, the thresholds they
calibrated, and how far the queue has read the evaluations."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import (
    Boolean,
    Float,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
)
from sqlalchemy.orm import Mapped, mapped_column

from .base import Base, JSONType, UTCDateTime


class ReviewItemRow(Base):
    """One evaluation waiting for (or given) people's labels."""

    __tablename__ = "review_items"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    evaluation_id: Mapped[int] = mapped_column(
        ForeignKey("evaluations.id", ondelete="CASCADE"), unique=True
    )
    record_id: Mapped[int] = mapped_column(ForeignKey("records.id", ondelete="CASCADE"))
    trace_id: Mapped[str] = mapped_column(String(32))
    tenant: Mapped[str | None] = mapped_column(String(200), nullable=True)
    judge: Mapped[str] = mapped_column(String(200))
    reason: Mapped[str] = mapped_column(String(40))
    priority: Mapped[int] = mapped_column(Integer)
    inclusion_probability: Mapped[float] = mapped_column(Float)
    reviews_wanted: Mapped[int] = mapped_column(Integer)
    reviews_done: Mapped[int] = mapped_column(Integer)
    status: Mapped[str] = mapped_column(String(20))
    """``open`` (wants a review), ``done`` or ``skipped``."""
    lease_owner: Mapped[str | None] = mapped_column(String(200), nullable=True)
    lease_expires: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())

    __table_args__ = (
        # The next item: a tenant's open items, most urgent first, oldest first.
        Index("ix_review_items_next", "status", "tenant", "priority", "id"),
        Index("ix_review_items_trace_id", "trace_id"),
    )


class ReviewLabelRow(Base):
    """One reviewer's label of one claim of an item (scrubbed text only)."""

    __tablename__ = "review_labels"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    item_id: Mapped[int] = mapped_column(ForeignKey("review_items.id", ondelete="CASCADE"))
    reviewer: Mapped[str] = mapped_column(String(200))
    claim_index: Mapped[int] = mapped_column(Integer)
    part: Mapped[int] = mapped_column(Integer)
    """Which part of a claim the reviewer split (0 for a claim labelled whole)."""
    merged: Mapped[list[int]] = mapped_column(JSONType)
    """The claims the reviewer merged with this one (all of them), or []."""
    claim_text: Mapped[str] = mapped_column(Text)
    """The claim as stored, or the reviewer's wording of a split part or a merge."""
    verdict: Mapped[str] = mapped_column(String(20))
    critical: Mapped[bool] = mapped_column(Boolean)
    note: Mapped[str] = mapped_column(Text)
    judge: Mapped[str] = mapped_column(String(200))
    """The judge configuration whose verdicts were under review."""
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())

    __table_args__ = (Index("ix_review_labels_item_id", "item_id", "reviewer"),)


class ReviewThresholdRow(Base):
    """A calibrated threshold, versioned: the newest per (judge, segment) is the one in use."""

    __tablename__ = "review_thresholds"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    judge: Mapped[str] = mapped_column(String(200))
    segment_key: Mapped[str] = mapped_column(String(500))
    threshold: Mapped[float] = mapped_column(Float)
    guard_low: Mapped[float] = mapped_column(Float)
    guard_high: Mapped[float] = mapped_column(Float)
    figures: Mapped[dict[str, Any]] = mapped_column(JSONType)
    rationale: Mapped[str] = mapped_column(Text)
    dataset_version: Mapped[str] = mapped_column(String(64))
    """A digest of the reviewed labels it was computed on."""
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())

    __table_args__ = (Index("ix_review_thresholds_judge", "judge", "segment_key", "id"),)


class ReviewCursorRow(Base):
    """How far the queue has read each judge's evaluations (their ids only grow)."""

    __tablename__ = "review_cursors"

    judge: Mapped[str] = mapped_column(String(200), primary_key=True)
    last_evaluation_id: Mapped[int] = mapped_column(Integer)
