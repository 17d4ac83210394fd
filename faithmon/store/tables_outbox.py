"""The alert outbox: notifications of grouped routes waiting for their group to be due, and
what each group last told (see :mod:`faithmon.alerts.grouping`)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import Index, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from .tables import Base, JSONType, UTCDateTime


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
