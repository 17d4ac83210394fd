"""A judge's evaluation of a record, and its claims one row each."""

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
    UniqueConstraint,
)
from sqlalchemy.orm import Mapped, mapped_column

from .base import Base, JSONType, UTCDateTime


class EvaluationRow(Base):
    __tablename__ = "evaluations"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    record_id: Mapped[int] = mapped_column(ForeignKey("records.id", ondelete="CASCADE"))
    judge: Mapped[str] = mapped_column(String(200))
    status: Mapped[str] = mapped_column(String(20))
    faithfulness: Mapped[float | None] = mapped_column(Float, nullable=True)
    lenient: Mapped[float | None] = mapped_column(Float, nullable=True)
    claims: Mapped[list[dict[str, Any]]] = mapped_column(JSONType)
    error: Mapped[str | None] = mapped_column(Text, nullable=True)
    raw: Mapped[str | None] = mapped_column(Text, nullable=True)
    usage: Mapped[dict[str, int]] = mapped_column(JSONType)
    latency_ms: Mapped[float] = mapped_column(Float)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())
    # The contracts beside the score: correct / cited claims (None: nothing cited), markers
    # naming no chunk the generator was given, and policy findings ({rule, text}).
    citation_accuracy: Mapped[float | None] = mapped_column(Float, nullable=True)
    unresolved_citations: Mapped[int] = mapped_column(Integer, default=0)
    policy: Mapped[list[dict[str, str]]] = mapped_column(JSONType, default=list)
    # The RAG triad beside faithfulness (``model.Relevance``): all None when the judge did
    # not measure them, so an evaluation without relevance is told from one that scored 0.
    context_relevance: Mapped[float | None] = mapped_column(Float, nullable=True)
    answer_relevance: Mapped[float | None] = mapped_column(Float, nullable=True)
    cause: Mapped[str | None] = mapped_column(String(16), nullable=True)
    abstention: Mapped[str | None] = mapped_column(String(16), nullable=True)

    __table_args__ = (
        UniqueConstraint("record_id", "judge"),
        # Everything an outcome needs of its evaluation, so counting outcomes (the report)
        # reads this index, not the claims beside them.
        Index(
            "ix_evaluations_record_id_judge_status",
            "record_id",
            "judge",
            "status",
            "faithfulness",
            "created_at",
        ),
        # The drift run asks whether a judge has evaluations newer than its watermark.
        Index("ix_evaluations_judge_id", "judge", "id"),
    )


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
