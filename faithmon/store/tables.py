"""ORM tables. These classes never leave ``store``; its query modules return model types."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import (
    JSON,
    Boolean,
    DateTime,
    Dialect,
    Float,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Text,
    TypeDecorator,
    UniqueConstraint,
    text,
)
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

NAMING = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

JSONType = JSON().with_variant(JSONB(), "postgresql")


class UTCDateTime(TypeDecorator[datetime]):
    """Stores naive UTC, returns aware UTC, on every backend."""

    impl = DateTime
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError("faithmon stores aware datetimes only")
        return value.astimezone(UTC).replace(tzinfo=None)

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        return None if value is None else value.replace(tzinfo=UTC)


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING)


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


class BaselineRow(Base):
    """One segment's frozen baseline, per judge configuration (judges differ in strictness)."""

    __tablename__ = "drift_baselines"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    judge: Mapped[str] = mapped_column(String(200))
    segment_key: Mapped[str] = mapped_column(String(500))
    records: Mapped[int] = mapped_column(Integer)
    unsupported: Mapped[int] = mapped_column(Integer)
    critical: Mapped[int] = mapped_column(Integer)
    spread: Mapped[float] = mapped_column(Float)
    critical_spread: Mapped[float] = mapped_column(Float)
    # The citation stream's: records whose answer cites (0: the stream has no baseline here).
    cited: Mapped[int] = mapped_column(Integer, default=0)
    miscited: Mapped[int] = mapped_column(Integer, default=0)
    citation_spread: Mapped[float] = mapped_column(Float, default=0.0)
    window_start: Mapped[datetime] = mapped_column(UTCDateTime())
    window_end: Mapped[datetime] = mapped_column(UTCDateTime())
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())

    __table_args__ = (UniqueConstraint("judge", "segment_key"),)


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


class SamplingCountRow(Base):
    __tablename__ = "sampling_counts"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    hour: Mapped[datetime] = mapped_column(UTCDateTime())
    segment_key: Mapped[str] = mapped_column(String(500))
    segment: Mapped[dict[str, str]] = mapped_column(JSONType)
    reason: Mapped[str] = mapped_column(String(100))
    count: Mapped[int] = mapped_column(Integer)

    __table_args__ = (UniqueConstraint("hour", "segment_key", "reason"),)


class DroppedTraceRow(Base):
    __tablename__ = "dropped_traces"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    trace_id: Mapped[str] = mapped_column(String(32), index=True)
    reason: Mapped[str] = mapped_column(String(100))
    segment: Mapped[dict[str, str]] = mapped_column(JSONType)
    at: Mapped[datetime] = mapped_column(UTCDateTime(), index=True)


class SegmentDailyRow(Base):
    """Per-segment daily aggregates, kept when retention deletes the records."""

    __tablename__ = "segment_daily"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    day: Mapped[datetime] = mapped_column(UTCDateTime())
    segment_key: Mapped[str] = mapped_column(String(500))
    segment: Mapped[dict[str, str]] = mapped_column(JSONType)
    records: Mapped[int] = mapped_column(Integer)
    scored: Mapped[int] = mapped_column(Integer)
    unsupported: Mapped[int] = mapped_column(Integer)
    faithfulness_sum: Mapped[float] = mapped_column(Float)

    __table_args__ = (UniqueConstraint("day", "segment_key"),)


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


class SegmentMetricsRow(Base):
    """Cumulative counters per segment and judge, for Prometheus-style scraping."""

    __tablename__ = "segment_metrics"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    segment_key: Mapped[str] = mapped_column(String(500))
    segment: Mapped[dict[str, str]] = mapped_column(JSONType)
    judge: Mapped[str] = mapped_column(String(200))
    evaluations: Mapped[int] = mapped_column(Integer)
    scored: Mapped[int] = mapped_column(Integer)
    unsupported: Mapped[int] = mapped_column(Integer)
    critical_unsupported: Mapped[int] = mapped_column(Integer)
    judge_errors: Mapped[int] = mapped_column(Integer)
    faithfulness_sum: Mapped[float] = mapped_column(Float)
    buckets: Mapped[list[int]] = mapped_column(JSONType)

    __table_args__ = (UniqueConstraint("segment_key", "judge"),)


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


class DriftThresholdRow(Base):
    """A detector's threshold set by `faithmon drift calibrate`, with the facts behind it."""

    __tablename__ = "drift_thresholds"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    detector: Mapped[str] = mapped_column(String(600), unique=True)
    threshold: Mapped[float] = mapped_column(Float)
    facts: Mapped[dict[str, Any]] = mapped_column(JSONType)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())


class DriftRunRow(Base):
    """The last drift run of a judge configuration: every detector's reading, as the read
    API and the dashboard show them (see :mod:`faithmon.drift.summary`)."""

    __tablename__ = "drift_runs"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    judge: Mapped[str] = mapped_column(String(200), unique=True)
    computed_at: Mapped[datetime] = mapped_column(UTCDateTime())
    baseline_ready: Mapped[bool] = mapped_column(Boolean)
    held_back: Mapped[bool] = mapped_column(Boolean)
    summary: Mapped[dict[str, Any]] = mapped_column(JSONType)


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


# The rows derived from a record's chunks and an evaluation's claims, and the drift state,
# live beside these; imported here so that every table is in ``Base.metadata`` whichever
# module is imported first.
from . import tables_derived as _derived  # noqa: E402, F401
