"""Queries: every function takes a Session and speaks in model types."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import asdict
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import func, or_, select, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.orm import Session

from ..model import (
    Chunk,
    Claim,
    Feedback,
    Judgement,
    RagRecord,
    StoredRecord,
    Usage,
)
from .tables import (
    EvaluationRow,
    FeedbackRow,
    RecordRow,
)

PENDING = "pending"
SCORED = "scored"
NO_CONTEXT = "no_context"
INCOMPLETE_EVIDENCE = "incomplete_evidence"
JUDGE_ERROR = "judge_error"


def initial_status(record: RagRecord) -> str:
    """Only a record with whole evidence and at least one chunk waits for the judge."""
    if record.incomplete:
        return INCOMPLETE_EVIDENCE
    return PENDING if record.chunks else NO_CONTEXT


def utc_now() -> datetime:
    return datetime.now(UTC)


def insert_for(session: Session, table: Any) -> Any:
    name = session.get_bind().dialect.name
    if name == "postgresql":
        return pg_insert(table)
    if name == "sqlite":
        return sqlite_insert(table)
    raise NotImplementedError(f"faithmon does not support the {name} dialect")


def _chunk_json(chunk: Chunk) -> dict[str, Any]:
    return {"id": chunk.id, "text": chunk.text, "score": chunk.score, "metadata": chunk.metadata}


def _record_row(record: RagRecord, now: datetime) -> dict[str, Any]:
    return {
        "trace_id": record.trace_id,
        "started_at": record.started_at,
        "ingested_at": now,
        "question": record.question,
        "answer": record.answer,
        "chunks": [_chunk_json(c) for c in record.chunks],
        "labels": dict(record.labels),
        "status": initial_status(record),
        "sample_reason": record.sample_reason,
        "retrieved": [_chunk_json(c) for c in record.retrieved] or None,
        "generation": dict(record.generation) or None,
        "keep_reason": record.keep,
        "incomplete_reason": record.incomplete,
        "convention": record.convention or None,
        "root_span_id": record.root_span_id or None,
        "repairs": list(record.repairs) or None,
    }


# A record rebuilt from late spans replaces one that no judge has seen yet.
REPLACEABLE = (PENDING, NO_CONTEXT, INCOMPLETE_EVIDENCE)


def save_records(session: Session, records: Sequence[RagRecord]) -> int:
    """Insert records; returns rows written.

    A trace id already stored is left as it is, except by a record rebuilt
    from late spans (``late``), which replaces it while it is not yet scored.
    """
    if not records:
        return 0
    now = utc_now()
    fresh = [_record_row(r, now) for r in records if not r.late]
    late = [_record_row(r, now) for r in records if r.late]
    written = 0
    if fresh:
        statement = insert_for(session, RecordRow).on_conflict_do_nothing(
            index_elements=["trace_id"]
        )
        written += len(session.execute(statement.returning(RecordRow.id), fresh).all())
    for row in late:
        statement = insert_for(session, RecordRow).values(row)
        replace_columns = {k: statement.excluded[k] for k in row if k not in ("trace_id",)}
        statement = statement.on_conflict_do_update(
            index_elements=["trace_id"],
            set_=replace_columns,
            where=RecordRow.status.in_(REPLACEABLE),
        )
        written += len(session.execute(statement.returning(RecordRow.id)).all())
    return written


def stored_trace_ids(session: Session, trace_ids: Iterable[str]) -> set[str]:
    """The trace ids among ``trace_ids`` that have a stored record."""
    wanted = list(trace_ids)
    found: set[str] = set()
    for start in range(0, len(wanted), 1000):
        chunk = wanted[start : start + 1000]
        found.update(
            session.scalars(select(RecordRow.trace_id).where(RecordRow.trace_id.in_(chunk)))
        )
    return found


def _to_chunks(items: list[dict[str, Any]] | None) -> tuple[Chunk, ...]:
    return tuple(
        Chunk(
            position=i,
            text=c["text"],
            id=c.get("id"),
            score=c.get("score"),
            metadata=c.get("metadata") or {},
        )
        for i, c in enumerate(items or ())
    )


def _to_record(row: RecordRow) -> RagRecord:
    return RagRecord(
        trace_id=row.trace_id,
        question=row.question,
        answer=row.answer,
        chunks=_to_chunks(row.chunks),
        labels=dict(row.labels),
        started_at=row.started_at,
        sample_reason=row.sample_reason,
        retrieved=_to_chunks(row.retrieved),
        generation=dict(row.generation or {}),
        keep=row.keep_reason,
        incomplete=row.incomplete_reason,
        convention=row.convention or "",
        root_span_id=row.root_span_id or "",
        repairs=tuple(row.repairs or ()),
    )


def save_feedback(session: Session, items: Sequence[Feedback]) -> None:
    """Store feedback; it may arrive before or after its record."""
    now = utc_now()
    session.add_all(
        FeedbackRow(trace_id=f.trace_id, value=f.value, given_at=f.at, received_at=now)
        for f in items
    )


def claim_pending(
    session: Session, owner: str, limit: int, lease_seconds: int
) -> list[tuple[int, RagRecord]]:
    """Lease up to ``limit`` pending records for ``owner``; expired leases are reclaimed.

    On PostgreSQL the rows are locked with SKIP LOCKED, so concurrent workers
    claim disjoint batches. The caller commits.
    """
    now = utc_now()
    query = (
        select(RecordRow)
        .where(
            RecordRow.status == PENDING,
            or_(RecordRow.lease_expires.is_(None), RecordRow.lease_expires < now),
            or_(RecordRow.next_attempt_at.is_(None), RecordRow.next_attempt_at <= now),
        )
        .order_by(RecordRow.id)
        .limit(limit)
    )
    if session.get_bind().dialect.name == "postgresql":
        query = query.with_for_update(skip_locked=True)
    rows = list(session.scalars(query))
    if not rows:
        return []
    session.execute(
        update(RecordRow)
        .where(RecordRow.id.in_([r.id for r in rows]))
        .values(lease_owner=owner, lease_expires=now + timedelta(seconds=lease_seconds))
    )
    return [(row.id, _to_record(row)) for row in rows]


def attempts_of(session: Session, record_ids: Sequence[int]) -> dict[int, tuple[int, datetime]]:
    """record id → (judge attempts deferred so far, when the record was ingested)."""
    rows = session.execute(
        select(RecordRow.id, RecordRow.attempts, RecordRow.ingested_at).where(
            RecordRow.id.in_(record_ids)
        )
    )
    return {row.id: (row.attempts or 0, row.ingested_at) for row in rows}


def _claim_json(claim: Claim) -> dict[str, Any]:
    return asdict(claim)


def save_evaluation(session: Session, record_id: int, judgement: Judgement) -> bool:
    """Store a judgement once per (record, judge) and settle the record's status."""
    row = {
        "record_id": record_id,
        "judge": judgement.judge,
        "status": judgement.status,
        "faithfulness": judgement.faithfulness,
        "lenient": judgement.lenient,
        "claims": [_claim_json(c) for c in judgement.claims],
        "error": judgement.error,
        "raw": judgement.raw,
        "usage": asdict(judgement.usage),
        "latency_ms": judgement.latency_ms,
        "created_at": utc_now(),
    }
    statement = insert_for(session, EvaluationRow).on_conflict_do_nothing(
        index_elements=["record_id", "judge"]
    )
    inserted = len(session.execute(statement.returning(EvaluationRow.id), [row]).all()) > 0
    status = JUDGE_ERROR if judgement.status == "judge_error" else SCORED
    session.execute(
        update(RecordRow)
        .where(RecordRow.id == record_id)
        .values(status=status, lease_owner=None, lease_expires=None)
    )
    return inserted


def _to_judgement(row: EvaluationRow) -> Judgement:
    return Judgement(
        judge=row.judge,
        status=row.status,  # type: ignore[arg-type]
        claims=tuple(Claim(**{**c, "flags": tuple(c.get("flags", ()))}) for c in row.claims),
        error=row.error,
        raw=row.raw,
        usage=Usage(**row.usage),
        latency_ms=row.latency_ms,
    )


def list_records(session: Session, limit: int = 100, offset: int = 0) -> list[StoredRecord]:
    """Newest first, with every evaluation of each record (oldest evaluation first)."""
    rows = list(
        session.scalars(
            select(RecordRow)
            .order_by(RecordRow.started_at.desc(), RecordRow.id.desc())
            .limit(limit)
            .offset(offset)
        )
    )
    evaluations: dict[int, list[Judgement]] = {}
    feedback: dict[str, list[Feedback]] = {}
    if rows:
        for item in session.scalars(
            select(FeedbackRow)
            .where(FeedbackRow.trace_id.in_([r.trace_id for r in rows]))
            .order_by(FeedbackRow.given_at, FeedbackRow.id)
        ):
            feedback.setdefault(item.trace_id, []).append(
                Feedback(trace_id=item.trace_id, value=item.value, at=item.given_at)
            )
        for evaluation in session.scalars(
            select(EvaluationRow)
            .where(EvaluationRow.record_id.in_([r.id for r in rows]))
            .order_by(EvaluationRow.id)
        ):
            evaluations.setdefault(evaluation.record_id, []).append(_to_judgement(evaluation))
    return [
        StoredRecord(
            id=row.id,
            record=_to_record(row),
            status=row.status,
            evaluations=tuple(evaluations.get(row.id, ())),
            feedback=tuple(feedback.get(row.trace_id, ())),
        )
        for row in rows
    ]


def counts_by_status(session: Session) -> dict[str, int]:
    return {
        status: count
        for status, count in session.execute(
            select(RecordRow.status, func.count()).group_by(RecordRow.status)
        )
    }


def example_details(
    session: Session, judge: str, trace_ids: Sequence[str]
) -> dict[str, dict[str, Any]]:
    """For alert payloads: each trace's chunk ids and its claims that were not supported,
    with the chunk each cites."""
    if not trace_ids:
        return {}
    query = (
        select(RecordRow.trace_id, RecordRow.chunks, EvaluationRow.claims)
        .join(EvaluationRow, EvaluationRow.record_id == RecordRow.id)
        .where(RecordRow.trace_id.in_(trace_ids), EvaluationRow.judge == judge)
    )
    found: dict[str, dict[str, Any]] = {}
    for trace_id, chunks, claims in session.execute(query):
        ids = [str(c.get("id") or i) for i, c in enumerate(chunks)]
        found[trace_id] = {
            "chunk_ids": ids,
            "claims": [
                {
                    "text": c["text"],
                    "verdict": c["verdict"],
                    "critical": bool(c.get("critical")),
                    "chunk_id": ids[c["chunk"]]
                    if isinstance(c.get("chunk"), int) and 0 <= c["chunk"] < len(ids)
                    else None,
                }
                for c in claims
                if c["verdict"] != "supported"
            ],
        }
    return found
