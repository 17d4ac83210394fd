"""Records and their leases: saving what ingest kept, and the queue the judges work through."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import Float, case, cast, delete, func, insert, or_, select, true, update
from sqlalchemy.orm import Session

from ..model import Chunk, Feedback, RagRecord
from ._dialect import insert_for, is_postgresql, json_items, json_text, skip_locked
from .tables import ChunkRow, FeedbackRow, RecordDocumentRow, RecordRow

PENDING = "pending"
SCORED = "scored"
NO_CONTEXT = "no_context"
INCOMPLETE_EVIDENCE = "incomplete_evidence"
JUDGE_ERROR = "judge_error"

# A record rebuilt from late spans replaces one that no judge has seen yet.
REPLACEABLE = (PENDING, NO_CONTEXT, INCOMPLETE_EVIDENCE)

# A record keeps the time faithmon received it (``ingested_at``, the receiver's clock):
# retention counts from it, since the app's clock may be anything. A start that clock
# puts far from that time is stored as the time received, with a repair noted:
# - ahead: an ended span cannot start after it is received, so only skew puts it
#   there; an hour covers any real skew, and caps how long a skewed record can sit
#   first in "newest first" (the lists order by start);
# - behind: a receiver holds a trace for seconds, its spool through an outage for
#   days; a year is neither, but a zero or garbled timestamp (1970).
# Migration 0027 applied the same rule to the records stored before it.
START_AHEAD_LIMIT = timedelta(hours=1)
START_BEHIND_LIMIT = timedelta(days=365)
START_AHEAD_REPAIR = "started_at: more than 1 hour after it was received, set to that time"
START_BEHIND_REPAIR = "started_at: more than 365 days before it was received, set to that time"


def initial_status(record: RagRecord) -> str:
    """Only a record with whole evidence and at least one chunk waits for the judge."""
    if record.incomplete:
        return INCOMPLETE_EVIDENCE
    return PENDING if record.chunks else NO_CONTEXT


def _chunk_json(chunk: Chunk) -> dict[str, Any]:
    return {"id": chunk.id, "text": chunk.text, "score": chunk.score, "metadata": chunk.metadata}


def received_columns(record: RagRecord, received_at: datetime) -> dict[str, Any]:
    """The columns a record takes from the time it was received: that time, the start
    (clamped to it when far from it) and the repairs (with the clamp's)."""
    started_at, repairs = record.started_at, list(record.repairs)
    if started_at > received_at + START_AHEAD_LIMIT:
        started_at = received_at
        repairs.append(START_AHEAD_REPAIR)
    elif started_at < received_at - START_BEHIND_LIMIT:
        started_at = received_at
        repairs.append(START_BEHIND_REPAIR)
    return {"started_at": started_at, "ingested_at": received_at, "repairs": repairs or None}


def _record_row(record: RagRecord, received_at: datetime) -> dict[str, Any]:
    return {
        "trace_id": record.trace_id,
        **received_columns(record, received_at),
        "question": record.question,
        "answer": record.answer,
        "chunks": [_chunk_json(c) for c in record.chunks],
        "labels": dict(record.labels),
        "tenant": record.labels.get("tenant") or None,
        "status": initial_status(record),
        "sample_reason": record.sample_reason,
        "retrieved": [_chunk_json(c) for c in record.retrieved] or None,
        "generation": dict(record.generation) or None,
        "keep_reason": record.keep,
        "incomplete_reason": record.incomplete,
        "convention": record.convention or None,
        "root_span_id": record.root_span_id or None,
    }


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


def to_record(row: RecordRow) -> RagRecord:
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


def save_records(
    session: Session, records: Sequence[RagRecord], received_at: datetime | None = None
) -> int:
    """Insert records received at ``received_at`` (default: now); returns rows written.

    A trace id already stored is left as it is, except by a record rebuilt
    from late spans (``late``), which replaces it while it is not yet scored.
    """
    if not records:
        return 0
    received = received_at or datetime.now(UTC)
    fresh = [_record_row(r, received) for r in records if not r.late]
    late = [_record_row(r, received) for r in records if r.late]
    written = 0
    if fresh:
        statement = insert_for(session, RecordRow).on_conflict_do_nothing(
            index_elements=["trace_id"]
        )
        stored = session.execute(statement.returning(RecordRow.id), fresh).scalars().all()
        written += len(stored)
        _save_chunks(session, stored)
        _save_documents(session, stored)
    for row in late:
        statement = insert_for(session, RecordRow).values(row)
        # It keeps the time it was first received: late spans do not restart retention.
        kept = ("trace_id", "ingested_at")
        replace_columns = {k: statement.excluded[k] for k in row if k not in kept}
        statement = statement.on_conflict_do_update(
            index_elements=["trace_id"],
            set_=replace_columns,
            where=RecordRow.status.in_(REPLACEABLE),
        )
        replaced = session.execute(statement.returning(RecordRow.id)).scalars().all()
        if replaced:
            written += 1
            # Its chunks were replaced, and perhaps its start and tenant.
            session.execute(delete(ChunkRow).where(ChunkRow.record_id == replaced[0]))
            session.execute(
                delete(RecordDocumentRow).where(RecordDocumentRow.record_id == replaced[0])
            )
            _save_chunks(session, replaced)
            _save_documents(session, replaced)
    return written


def _save_chunks(session: Session, record_ids: Sequence[int]) -> None:
    """A chunk row per record and position, read from the chunks as stored, in the
    database (as the document rows are): one statement per thousand records."""
    chunks, chunk, at = json_items(session, RecordRow.chunks)
    if is_postgresql(session):
        position = at - 1  # WITH ORDINALITY counts from 1
        score = case(
            (func.jsonb_typeof(chunk["score"]) == "number", cast(chunk["score"].astext, Float))
        )
    else:
        position = at
        score = case(
            (
                func.json_type(chunk, "$.score").in_(("real", "integer")),
                func.json_extract(chunk, "$.score"),
            )
        )
    doc = json_text(session, chunk, "id")
    columns = ["record_id", "position", "doc_id", "score", "tenant", "started_at"]
    for start in range(0, len(record_ids), 1000):
        rows = (
            select(RecordRow.id, position, doc, score, RecordRow.tenant, RecordRow.started_at)
            .select_from(RecordRow)
            .join(chunks, true())
            .where(RecordRow.id.in_(record_ids[start : start + 1000]))
        )
        session.execute(insert(ChunkRow).from_select(columns, rows))


def _save_documents(session: Session, record_ids: Sequence[int]) -> None:
    """A document row per record and distinct chunk id, read from the chunks as stored, in
    the database: no row of it passes through Python."""
    chunks, chunk, _ = json_items(session, RecordRow.chunks)
    doc = json_text(session, chunk, "id")
    for start in range(0, len(record_ids), 1000):
        rows = (
            select(RecordRow.id, doc, RecordRow.tenant, RecordRow.started_at)
            .select_from(RecordRow)
            .join(chunks, true())
            .where(RecordRow.id.in_(record_ids[start : start + 1000]), doc.is_not(None))
            .distinct()
        )
        columns = ["record_id", "doc_id", "tenant", "started_at"]
        session.execute(insert(RecordDocumentRow).from_select(columns, rows))


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


def holds_other_service(session: Session, service: str) -> bool:
    """Whether any stored record came from a service other than ``service`` (the demo asks,
    before it writes into a database, whether it would mix its records with someone's)."""
    named = json_text(session, RecordRow.labels, "service")
    other = select(RecordRow.id).where(or_(named.is_(None), named != service)).limit(1)
    return session.scalar(other) is not None


def save_feedback(session: Session, items: Sequence[Feedback]) -> None:
    """Store feedback; it may arrive before or after its record."""
    now = datetime.now(UTC)
    session.add_all(
        FeedbackRow(trace_id=f.trace_id, value=f.value, given_at=f.at, received_at=now)
        for f in items
    )


def counts_by_status(session: Session, tenant: str | None = None) -> dict[str, int]:
    """Records by status (of one tenant's, with ``tenant``)."""
    query = select(RecordRow.status, func.count()).group_by(RecordRow.status)
    if tenant is not None:
        query = query.where(RecordRow.tenant == tenant)
    return {status: count for status, count in session.execute(query)}


def claim_pending(
    session: Session, owner: str, limit: int, lease_seconds: int
) -> list[tuple[int, RagRecord]]:
    """Lease up to ``limit`` pending records for ``owner``; expired leases are reclaimed.

    On PostgreSQL the rows are locked with SKIP LOCKED, so concurrent workers
    claim disjoint batches. The caller commits.
    """
    now = datetime.now(UTC)
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
    rows = list(session.scalars(skip_locked(session, query)))
    if not rows:
        return []
    session.execute(
        update(RecordRow)
        .where(RecordRow.id.in_([r.id for r in rows]))
        .values(lease_owner=owner, lease_expires=now + timedelta(seconds=lease_seconds))
    )
    return [(row.id, to_record(row)) for row in rows]


def attempts_of(session: Session, record_ids: Sequence[int]) -> dict[int, tuple[int, datetime]]:
    """record id → (judge attempts deferred so far, when the record was ingested)."""
    rows = session.execute(
        select(RecordRow.id, RecordRow.attempts, RecordRow.ingested_at).where(
            RecordRow.id.in_(record_ids)
        )
    )
    return {row.id: (row.attempts or 0, row.ingested_at) for row in rows}


def defer(
    session: Session, record_id: int, attempts: int, next_attempt_at: datetime, error: str
) -> None:
    """Put a record back in the queue, to be tried again no sooner than ``next_attempt_at``."""
    session.execute(
        update(RecordRow)
        .where(RecordRow.id == record_id)
        .values(
            attempts=attempts,
            next_attempt_at=next_attempt_at,
            last_error=error[:2000],
            lease_owner=None,
            lease_expires=None,
        )
    )


def release(session: Session, record_ids: Sequence[int]) -> None:
    """Give leased records back untouched (their judge configuration was blocked)."""
    if record_ids:
        session.execute(
            update(RecordRow)
            .where(RecordRow.id.in_(record_ids))
            .values(lease_owner=None, lease_expires=None)
        )
