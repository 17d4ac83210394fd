"""Queries: every function takes a Session and speaks in model types."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import and_, func, or_, select, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.orm import Session

from ..model import (
    Alert,
    Chunk,
    Claim,
    Feedback,
    Judgement,
    Outcome,
    RagRecord,
    StoredRecord,
    Usage,
    segment_key,
)
from .tables import (
    AlertRow,
    BaselineRow,
    EvaluationRow,
    FeedbackRow,
    JudgeTrustRow,
    RecordRow,
    SamplingCountRow,
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


def _now() -> datetime:
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
    now = _now()
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
    now = _now()
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
    now = _now()
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
        "created_at": _now(),
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


ORDINARY = ("sampled", "rule:minimum")
"""Kept with no regard to content: the stratum the sampling ratio applies to."""
DROPPED_ORDINARY = ("sampled_out", "rate_limited")


def sampling_weights(
    session: Session, since: datetime | None = None
) -> dict[datetime, list[tuple[dict[str, str], float]]]:
    """hour → [(sampling segment, weight of its ordinary records)].

    A record kept by the ratio (or a segment's minimum) stands for every record
    of its segment and hour that the ratio or a rate limit dropped too; a record
    kept by a keep-always rule stands for itself (weight 1), since every record
    matching the rule was kept. This post-stratification is what makes rates
    unbiased when rules keep the bad records more often.
    """
    query = select(SamplingCountRow).where(SamplingCountRow.reason.in_(ORDINARY + DROPPED_ORDINARY))
    if since is not None:
        query = query.where(SamplingCountRow.hour >= since)
    tallies: dict[tuple[datetime, str], tuple[dict[str, str], list[int]]] = {}
    for row in session.scalars(query):
        _, counts = tallies.setdefault((row.hour, row.segment_key), (dict(row.segment), [0, 0]))
        counts[0] += row.count
        if row.reason in ORDINARY:
            counts[1] += row.count
    weights: dict[datetime, list[tuple[dict[str, str], float]]] = {}
    for (hour, _), (segment, (seen, kept)) in tallies.items():
        if kept:
            weights.setdefault(hour, []).append((segment, seen / kept))
    return weights


def _weight(
    weights: Mapping[datetime, list[tuple[dict[str, str], float]]],
    started_at: datetime,
    labels: Mapping[str, str],
    reason: str,
) -> float:
    if reason not in ORDINARY:
        return 1.0
    hour = started_at.replace(minute=0, second=0, microsecond=0)
    for segment, weight in weights.get(hour, ()):
        if all(labels.get(k) == v for k, v in segment.items()):
            return weight
    return 1.0


def outcomes(session: Session, judge: str, since: datetime | None = None) -> list[Outcome]:
    """``ok`` evaluations by ``judge``, oldest trace first, reduced to drift outcomes."""
    query = (
        select(
            RecordRow.trace_id,
            RecordRow.started_at,
            RecordRow.labels,
            RecordRow.sample_reason,
            EvaluationRow.claims,
        )
        .join(EvaluationRow, EvaluationRow.record_id == RecordRow.id)
        .where(and_(EvaluationRow.judge == judge, EvaluationRow.status == "ok"))
        .order_by(RecordRow.started_at, RecordRow.id)
    )
    if since is not None:
        query = query.where(RecordRow.started_at >= since)
    trust = session.scalars(select(JudgeTrustRow).where(JudgeTrustRow.judge == judge)).first()
    if trust is not None:
        # Evaluations made while sentinels showed this judge drifting do not count.
        untrusted = EvaluationRow.created_at >= trust.untrusted_since
        if trust.untrusted_until is not None:
            untrusted = and_(untrusted, EvaluationRow.created_at < trust.untrusted_until)
        query = query.where(~untrusted)
    weights = sampling_weights(session, since)
    result = []
    for trace_id, started_at, labels, reason, claims in session.execute(query):
        bad = [c for c in claims if c["verdict"] != "supported"]
        result.append(
            Outcome(
                trace_id=trace_id,
                at=started_at,
                labels=labels,
                unsupported=bool(bad),
                unsupported_claims=tuple(c["text"] for c in bad),
                critical=any(c.get("critical") for c in bad),
                weight=_weight(weights, started_at, labels, reason),
            )
        )
    return result


def load_baselines(
    session: Session, judge: str
) -> dict[str, tuple[int, int, int, float, float, datetime, datetime]]:
    """segment key → (records, unsupported, critical, spread, critical spread, window
    start, window end) for ``judge``."""
    query = select(BaselineRow).where(BaselineRow.judge == judge)
    return {
        row.segment_key: (
            row.records,
            row.unsupported,
            row.critical,
            row.spread,
            row.critical_spread,
            row.window_start,
            row.window_end,
        )
        for row in session.scalars(query)
    }


def save_baselines(
    session: Session,
    judge: str,
    baselines: Mapping[str, tuple[int, int, int, float, float]],
    window_start: datetime,
    window_end: datetime,
) -> None:
    now = _now()
    rows = [
        {
            "judge": judge,
            "segment_key": key,
            "records": records,
            "unsupported": unsupported,
            "critical": critical,
            "spread": spread,
            "critical_spread": critical_spread,
            "window_start": window_start,
            "window_end": window_end,
            "created_at": now,
        }
        for key, (records, unsupported, critical, spread, critical_spread) in baselines.items()
    ]
    if rows:
        session.execute(
            insert_for(session, BaselineRow).on_conflict_do_nothing(
                index_elements=["judge", "segment_key"]
            ),
            rows,
        )


def _to_alert(row: AlertRow) -> Alert:
    return Alert(
        id=row.id,
        rule=row.rule,
        segment=dict(row.segment),
        state=row.state,  # type: ignore[arg-type]
        severity=row.severity,
        opened_at=row.opened_at,
        updated_at=row.updated_at,
        resolved_at=row.resolved_at,
        details=dict(row.details),
        notified_at=row.notified_at,
    )


def open_alerts(session: Session, rule: str | None = None) -> list[Alert]:
    query = select(AlertRow).where(AlertRow.state != "resolved").order_by(AlertRow.id)
    if rule is not None:
        query = query.where(AlertRow.rule == rule)
    return [_to_alert(row) for row in session.scalars(query)]


def list_alerts(session: Session, include_resolved: bool = True) -> list[Alert]:
    query = select(AlertRow).order_by(AlertRow.id)
    if not include_resolved:
        query = query.where(AlertRow.state != "resolved")
    return [_to_alert(row) for row in session.scalars(query)]


def save_alerts(session: Session, alerts: Iterable[Alert]) -> list[Alert]:
    """Insert new alerts (id None) and update existing ones; returns them with ids."""
    saved = []
    for alert in alerts:
        values = {
            "rule": alert.rule,
            "segment_key": segment_key(alert.segment),
            "segment": dict(alert.segment),
            "state": alert.state,
            "severity": alert.severity,
            "opened_at": alert.opened_at,
            "updated_at": alert.updated_at,
            "resolved_at": alert.resolved_at,
            "details": dict(alert.details),
            "notified_at": alert.notified_at,
        }
        if alert.id is None:
            row = AlertRow(**values)
            session.add(row)
            session.flush()
        else:
            row = session.get_one(AlertRow, alert.id)
            for key, value in values.items():
                setattr(row, key, value)
        saved.append(_to_alert(row))
    return saved


def resolved_alerts(
    session: Session, rules: Sequence[str], since: datetime | None = None
) -> list[Alert]:
    """The latest resolved alert per (rule, segment) of ``rules`` (resolved after ``since``)."""
    query = (
        select(AlertRow)
        .where(AlertRow.state == "resolved", AlertRow.rule.in_(rules))
        .order_by(AlertRow.resolved_at)
    )
    if since is not None:
        query = query.where(AlertRow.resolved_at >= since)
    latest = {(row.rule, row.segment_key): row for row in session.scalars(query)}
    return [_to_alert(row) for row in latest.values()]


def get_alert(session: Session, alert_id: int) -> Alert | None:
    row = session.get(AlertRow, alert_id)
    return _to_alert(row) if row is not None else None


def ack_alert(session: Session, alert_id: int, by: str, at: datetime) -> Alert | None:
    """Record who acknowledged an alert; its state is the detector's, not changed here."""
    row = session.get(AlertRow, alert_id)
    if row is None:
        return None
    row.details = {**row.details, "acked_by": by, "acked_at": at.isoformat()}
    return _to_alert(row)


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
