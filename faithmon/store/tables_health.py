"""The receivers' heartbeats (see :mod:`faithmon.model.health`)."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from .tables import Base, UTCDateTime


class ReceiverRow(Base):
    __tablename__ = "receivers"

    name: Mapped[str] = mapped_column(String(300), primary_key=True)
    started_at: Mapped[datetime] = mapped_column(UTCDateTime())
    beat_at: Mapped[datetime] = mapped_column(UTCDateTime())
    stopped_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    spans: Mapped[int] = mapped_column(Integer)
    records: Mapped[int] = mapped_column(Integer)
    lost: Mapped[int] = mapped_column(Integer)
    backlog: Mapped[int] = mapped_column(Integer)
    failing_since: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    last_error: Mapped[str] = mapped_column(String(200))
