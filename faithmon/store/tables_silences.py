"""The silences table (see :mod:`faithmon.model.silences`), on the same ``Base`` as the rest."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Index, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from .tables import Base, JSONType, UTCDateTime


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
