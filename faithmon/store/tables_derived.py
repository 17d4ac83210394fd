"""Tables derived from others for the queries that would otherwise parse JSON, and the drift
detectors' folded state (see :mod:`.tables` for the rest of the schema)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import Boolean, Float, ForeignKey, Index, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from .tables import Base, JSONType, UTCDateTime


class ClaimRow(Base):
    """One claim of an evaluation, by its index in the evaluation's claims: written with the
    evaluation (whose ``claims`` JSON stays what readers load, with the claim's text), so
    filters on verdicts, per-document figures and the review loop read an index."""

    __tablename__ = "claims"

    evaluation_id: Mapped[int] = mapped_column(
        ForeignKey("evaluations.id", ondelete="CASCADE"), primary_key=True
    )
    position: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    record_id: Mapped[int] = mapped_column(ForeignKey("records.id", ondelete="CASCADE"))
    judge: Mapped[str] = mapped_column(String(200))
    verdict: Mapped[str] = mapped_column(String(20))
    chunk: Mapped[int | None] = mapped_column(Integer, nullable=True)
    """The position of the chunk the claim cites (``chunks.position`` of its record)."""
    critical: Mapped[bool] = mapped_column(Boolean)
    stage: Mapped[str | None] = mapped_column(String(10), nullable=True)
    confidence: Mapped[float | None] = mapped_column(Float, nullable=True)

    __table_args__ = (
        # Per-document figures: a judge's claims of one verdict that cite a chunk.
        Index("ix_claims_judge_verdict_record_id", "judge", "verdict", "record_id", "chunk"),
        Index("ix_claims_record_id", "record_id"),
    )


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


# Silences and the alert outbox are their own modules; imported here so that
# ``Base.metadata`` holds them whichever module is imported first (``tables`` imports this one).
from . import tables_health as _health  # noqa: E402, F401
from . import tables_outbox as _outbox  # noqa: E402, F401
from . import tables_review as _review  # noqa: E402, F401
from . import tables_silences as _silences  # noqa: E402, F401


class ChunkRow(Base):
    """A chunk a record's generator was given, by its position: written with the record
    (and rewritten with it when late spans rebuild it), read from the record's chunks as
    stored, so filters and per-document figures need not parse the JSON. The record's
    ``chunks`` JSON stays what readers load; tenant and start are the record's again, for
    a documents window."""

    __tablename__ = "chunks"

    record_id: Mapped[int] = mapped_column(
        ForeignKey("records.id", ondelete="CASCADE"), primary_key=True
    )
    position: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    # Unbounded, so in no PostgreSQL index (a B-tree entry there holds 2.7 KB at most).
    doc_id: Mapped[str | None] = mapped_column(Text, nullable=True)
    score: Mapped[float | None] = mapped_column(Float, nullable=True)
    tenant: Mapped[str | None] = mapped_column(String(200), nullable=True)
    started_at: Mapped[datetime] = mapped_column(UTCDateTime())

    __table_args__ = (Index("ix_chunks_tenant_started_at", "tenant", "started_at"),)
