"""A record as received: the record, the chunks and documents its generator was given,
and the feedback its users sent."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import (
    Float,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
    text,
)
from sqlalchemy.orm import Mapped, mapped_column

from .base import Base, JSONType, UTCDateTime


class RecordRow(Base):
    __tablename__ = "records"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    trace_id: Mapped[str] = mapped_column(String(32), unique=True)
    started_at: Mapped[datetime] = mapped_column(UTCDateTime(), index=True)
    # When faithmon received it, by the receiver's clock: what retention counts from.
    ingested_at: Mapped[datetime] = mapped_column(UTCDateTime())
    question: Mapped[str] = mapped_column(Text)
    answer: Mapped[str] = mapped_column(Text)
    chunks: Mapped[list[dict[str, Any]]] = mapped_column(JSONType)
    labels: Mapped[dict[str, str]] = mapped_column(JSONType)
    status: Mapped[str] = mapped_column(String(20))
    sample_reason: Mapped[str] = mapped_column(String(100))
    lease_owner: Mapped[str | None] = mapped_column(String(100), nullable=True)
    lease_expires: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    retrieved: Mapped[list[dict[str, Any]] | None] = mapped_column(JSONType, nullable=True)
    generation: Mapped[dict[str, Any] | None] = mapped_column(JSONType, nullable=True)
    keep_reason: Mapped[str | None] = mapped_column(String(200), nullable=True)
    incomplete_reason: Mapped[str | None] = mapped_column(Text, nullable=True)
    convention: Mapped[str | None] = mapped_column(String(100), nullable=True)
    attempts: Mapped[int | None] = mapped_column(Integer, nullable=True)
    next_attempt_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    last_error: Mapped[str | None] = mapped_column(Text, nullable=True)
    root_span_id: Mapped[str | None] = mapped_column(String(16), nullable=True)
    repairs: Mapped[list[str] | None] = mapped_column(JSONType, nullable=True)
    # The tenant label again, as a column: every read of a tenant-bound key filters on it.
    tenant: Mapped[str | None] = mapped_column(String(200), nullable=True)

    __table_args__ = (
        Index("ix_records_status_id", "status", "id"),
        # Retention's batches, oldest received first.
        Index("ix_records_ingested_at_id", "ingested_at", "id"),
        Index("ix_records_tenant_started_at", "tenant", "started_at"),
        # What the report counts by, read without the record rows: on SQLite a row holds
        # its chunks, so reading labels for every record reads the whole table (0.1 s per
        # 100,000 records). PostgreSQL compresses large chunks or moves them out of the
        # row (TOAST), and a B-tree entry over labels could pass its 2.7 KB limit there:
        # on PostgreSQL the index is empty.
        Index(
            "ix_records_tenant_started_at_labels",
            "tenant",
            "started_at",
            "labels",
            postgresql_where=text("false"),
        ),
        # The trace list's label filter (``labels @> ...``) on PostgreSQL, for label sets
        # too rare to find by walking the start index. SQLite has no GIN: empty there.
        Index(
            "ix_records_labels",
            "labels",
            postgresql_using="gin",
            postgresql_ops={"labels": "jsonb_path_ops"},
            sqlite_where=text("false"),
        ),
    )


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


class RecordDocumentRow(Base):
    """A document a record's generator was given: a row per record and distinct chunk id,
    written with the record, so the documents view counts them without reading chunks.
    Tenant and start are the record's again, for the view's window."""

    __tablename__ = "record_documents"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    record_id: Mapped[int] = mapped_column(ForeignKey("records.id", ondelete="CASCADE"), index=True)
    # Unbounded, so in no PostgreSQL index: a B-tree entry there holds 2.7 KB at most.
    doc_id: Mapped[str] = mapped_column(Text)
    tenant: Mapped[str | None] = mapped_column(String(200), nullable=True)
    started_at: Mapped[datetime] = mapped_column(UTCDateTime(), index=True)

    __table_args__ = (Index("ix_record_documents_tenant_started_at", "tenant", "started_at"),)


class FeedbackRow(Base):
    __tablename__ = "feedback"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    trace_id: Mapped[str] = mapped_column(String(32), index=True)
    value: Mapped[Any] = mapped_column(JSONType)
    given_at: Mapped[datetime] = mapped_column(UTCDateTime())
    received_at: Mapped[datetime] = mapped_column(UTCDateTime())
