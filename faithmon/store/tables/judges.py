"""What is known of each judge configuration: its sentinel sets and runs, whether its
scores are trusted, whether it is blocked, and its usage against the daily budget."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import (
    Float,
    ForeignKey,
    Integer,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.orm import Mapped, mapped_column

from .base import Base, JSONType, UTCDateTime


class SentinelSetRow(Base):
    """A versioned set of known-supported and known-unsupported cases."""

    __tablename__ = "sentinel_sets"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    name: Mapped[str] = mapped_column(String(200))
    version: Mapped[str] = mapped_column(String(32))
    cases: Mapped[list[dict[str, Any]]] = mapped_column(JSONType)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())

    __table_args__ = (UniqueConstraint("name", "version"),)


class SentinelRunRow(Base):
    __tablename__ = "sentinel_runs"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    set_id: Mapped[int] = mapped_column(ForeignKey("sentinel_sets.id", ondelete="CASCADE"))
    judge: Mapped[str] = mapped_column(String(200), index=True)
    ran_at: Mapped[datetime] = mapped_column(UTCDateTime())
    results: Mapped[dict[str, Any]] = mapped_column(JSONType)
    statistic: Mapped[float] = mapped_column(Float)
    state: Mapped[str] = mapped_column(String(20))


class JudgeTrustRow(Base):
    """A judge configuration whose evaluations since a time are not to be trusted."""

    __tablename__ = "judge_trust"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    judge: Mapped[str] = mapped_column(String(200), unique=True)
    untrusted_since: Mapped[datetime] = mapped_column(UTCDateTime())
    untrusted_until: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    reason: Mapped[str] = mapped_column(Text)


class JudgeBlockRow(Base):
    """A judge configuration stopped by an authentication or billing failure."""

    __tablename__ = "judge_blocks"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    judge: Mapped[str] = mapped_column(String(200), unique=True)
    reason: Mapped[str] = mapped_column(Text)
    blocked_at: Mapped[datetime] = mapped_column(UTCDateTime())


class JudgeUsageRow(Base):
    """Judge usage per UTC day, shared by every worker for the daily budget."""

    __tablename__ = "judge_usage"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    day: Mapped[datetime] = mapped_column(UTCDateTime())
    judge: Mapped[str] = mapped_column(String(200))
    calls: Mapped[int] = mapped_column(Integer)
    prompt_tokens: Mapped[int] = mapped_column(Integer)
    completion_tokens: Mapped[int] = mapped_column(Integer)

    __table_args__ = (UniqueConstraint("day", "judge"),)
