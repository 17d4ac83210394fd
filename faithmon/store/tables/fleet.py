"""The deployment's own rows: the receivers' heartbeats, the fingerprints of the secrets
every process must share (see :mod:`faithmon.model.health`), and the API keys."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import (
    Integer,
    String,
)
from sqlalchemy.orm import Mapped, mapped_column

from .base import Base, JSONType, UTCDateTime


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


class FingerprintRow(Base):
    """One row per shared secret (``scrub_key``): the first process records it."""

    __tablename__ = "fingerprints"

    name: Mapped[str] = mapped_column(String(40), primary_key=True)
    fingerprint: Mapped[str] = mapped_column(String(64))
    recorded_by: Mapped[str] = mapped_column(String(500))
    recorded_at: Mapped[datetime] = mapped_column(UTCDateTime())


class ApiKeyRow(Base):
    __tablename__ = "api_keys"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    prefix: Mapped[str] = mapped_column(String(16), index=True)
    key_hash: Mapped[str] = mapped_column(String(64), unique=True)
    name: Mapped[str] = mapped_column(String(200))
    scopes: Mapped[list[str]] = mapped_column(JSONType)
    tenant: Mapped[str | None] = mapped_column(String(200), nullable=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())
    revoked_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    sessions_ended_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
