"""Alerts and their delivery: the alerts, the silences that mute them, and the outbox of
grouped notifications with what each group last told (see :mod:`faithmon.alerts.grouping`)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import (
    Index,
    Integer,
    String,
    Text,
)
from sqlalchemy.orm import Mapped, mapped_column

from .base import Base, JSONType, UTCDateTime


class AlertRow(Base):
    __tablename__ = "alerts"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    rule: Mapped[str] = mapped_column(String(100))
    segment_key: Mapped[str] = mapped_column(String(500))
    segment: Mapped[dict[str, str]] = mapped_column(JSONType)
    state: Mapped[str] = mapped_column(String(20))
    severity: Mapped[str] = mapped_column(String(20))
    opened_at: Mapped[datetime] = mapped_column(UTCDateTime())
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime())
    resolved_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    details: Mapped[dict[str, Any]] = mapped_column(JSONType)
    notified_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)

    __table_args__ = (
        Index("ix_alerts_rule_segment_state", "rule", "segment_key", "state"),
        # The lists of pages and reports (``reads_alerts.shown_alerts``): the open ones
        # and the newest resolved, of every segment or of one, each read by an index.
        Index("ix_alerts_state_id", "state", "id"),
        Index("ix_alerts_segment_key_id", "segment_key", "id"),
    )


class SilenceRow(Base):
    __tablename__ = "silences"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    matchers: Mapped[list[str]] = mapped_column(JSONType)
    starts_at: Mapped[datetime] = mapped_column(UTCDateTime())
    ends_at: Mapped[datetime] = mapped_column(UTCDateTime())
    comment: Mapped[str] = mapped_column(Text)
    created_by: Mapped[str] = mapped_column(String(200))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())
    expired_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    tenant: Mapped[str | None] = mapped_column(String(200), nullable=True)

    __table_args__ = (
        # Every delivery asks which silences run now, and the lists show those not yet
        # ended: both are a range on the end, however many old silences are kept.
        Index("ix_silences_ends_at", "ends_at"),
    )


class OutboxRow(Base):
    __tablename__ = "alert_outbox"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    route_key: Mapped[str] = mapped_column(String(64))
    group_key: Mapped[str] = mapped_column(String(64))
    labels: Mapped[dict[str, str]] = mapped_column(JSONType)
    alert: Mapped[dict[str, Any]] = mapped_column(JSONType)
    """The alert as its route's kind rule prepared it (``alerts.to_json``)."""
    enqueued_at: Mapped[datetime] = mapped_column(UTCDateTime())

    __table_args__ = (Index("ix_alert_outbox_group", "route_key", "group_key", "id"),)


class AlertGroupRow(Base):
    __tablename__ = "alert_groups"

    route_key: Mapped[str] = mapped_column(String(64), primary_key=True)
    group_key: Mapped[str] = mapped_column(String(64), primary_key=True)
    labels: Mapped[dict[str, str]] = mapped_column(JSONType)
    last_sent_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    told: Mapped[dict[str, Any]] = mapped_column(JSONType)
    """Per incident (kind and segment): the state last told and when its firing was told."""
