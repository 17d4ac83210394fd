"""Evaluations: a judge's verdict on a record, stored once per (record, judge configuration),
and read back as the outcomes drift detects on."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import ColumnElement, and_, case, null, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from ..errors import RecordGone
from ..model import Claim, Evidence, Judgement, Outcome, Usage
from ._dialect import insert_for, json_values, savepoint
from .records import JUDGE_ERROR, SCORED
from .tables import EvaluationRow, JudgeTrustRow, RecordRow

UNSUPPORTED = EvaluationRow.faithfulness < 1
"""``Judgement.unsupported`` in SQL: it is defined by the strict score, which is stored."""


def to_claims(items: Sequence[dict[str, Any]]) -> tuple[Claim, ...]:
    return tuple(Claim(**{**c, "flags": tuple(c.get("flags", ()))}) for c in items)


def to_judgement(row: EvaluationRow) -> Judgement:
    return Judgement(
        judge=row.judge,
        status=row.status,  # type: ignore[arg-type]
        claims=to_claims(row.claims),
        error=row.error,
        raw=row.raw,
        usage=Usage(**row.usage),
        latency_ms=row.latency_ms,
    )


def save_evaluation(session: Session, record_id: int, judgement: Judgement) -> bool:
    """Store a judgement once per (record, judge) and settle the record's status."""
    row = {
        "record_id": record_id,
        "judge": judgement.judge,
        "status": judgement.status,
        "faithfulness": judgement.faithfulness,
        "lenient": judgement.lenient,
        "claims": [asdict(c) for c in judgement.claims],
        "error": judgement.error,
        "raw": judgement.raw,
        "usage": asdict(judgement.usage),
        "latency_ms": judgement.latency_ms,
        "created_at": datetime.now(UTC),
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


def settle(session: Session, record_id: int, judgement: Judgement) -> bool:
    """Store a leased record's judgement (see :func:`save_evaluation`); True if new.

    Raises ``RecordGone`` when the record was deleted under the lease, leaving the
    session usable, so the rest of a batch can still be settled.
    """
    try:
        with savepoint(session):
            return save_evaluation(session, record_id, judgement)
    except IntegrityError:
        # The evaluation's foreign key is the only constraint the insert can break;
        # anything else is not ours to swallow.
        if session.scalar(select(RecordRow.id).where(RecordRow.id == record_id)) is not None:
            raise
        raise RecordGone(record_id) from None


def _evidence(chunk_ids: Sequence[str | None] | None, claims: tuple[Claim, ...]) -> Evidence:
    # A chunk without an id is named by its position.
    return Evidence(tuple(str(c or i) for i, c in enumerate(chunk_ids or ())), claims)


def counted(session: Session, judge: str) -> ColumnElement[bool]:
    """Which evaluations are ``judge``'s outcomes: its ``ok`` ones, less those made while
    sentinels showed it drifting. Every reader of outcomes (drift, the report) asks this."""
    condition = and_(EvaluationRow.judge == judge, EvaluationRow.status == "ok")
    trust = session.scalars(select(JudgeTrustRow).where(JudgeTrustRow.judge == judge)).first()
    if trust is None:
        return condition
    untrusted = EvaluationRow.created_at >= trust.untrusted_since
    if trust.untrusted_until is not None:
        untrusted = and_(untrusted, EvaluationRow.created_at < trust.untrusted_until)
    return and_(condition, ~untrusted)


def outcomes(
    session: Session, judge: str, since: datetime | None = None, evidence: bool = True
) -> list[Outcome]:
    """``ok`` evaluations by ``judge``, oldest trace first, reduced to drift outcomes.

    With ``evidence`` each unsupported one carries what its alert shows, read here with
    the rest, so nothing is looked up again for the alert. The outcomes weigh 1: their
    sampling weights are drift's to give (``drift.weigh``, from ``sampling_counts``).
    """
    chunk_ids: ColumnElement[Any] = null()
    if evidence:
        chunk_ids = case((UNSUPPORTED, json_values(session, RecordRow.chunks, "id")), else_=None)
    query = (
        select(
            RecordRow.trace_id,
            RecordRow.started_at,
            RecordRow.labels,
            RecordRow.sample_reason,
            EvaluationRow.claims,
            chunk_ids,
        )
        .join(EvaluationRow, EvaluationRow.record_id == RecordRow.id)
        .where(counted(session, judge))
        .order_by(RecordRow.started_at, RecordRow.id)
    )
    if since is not None:
        query = query.where(RecordRow.started_at >= since)
    result = []
    for trace_id, started_at, labels, reason, claims, ids in session.execute(query):
        judgement = Judgement(judge, "ok", to_claims(claims))
        doubtful = judgement.not_supported
        result.append(
            Outcome(
                trace_id=trace_id,
                at=started_at,
                labels=labels,
                unsupported=judgement.unsupported,
                unsupported_claims=tuple(c.text for c in doubtful),
                critical=judgement.critical_unsupported,
                sample_reason=reason,
                evidence=_evidence(ids, doubtful) if evidence and judgement.unsupported else None,
            )
        )
    return result


def latest_judge(session: Session) -> str | None:
    """The judge configuration that wrote the newest evaluation: the one a reader of the
    dashboard sees scores of (the server itself judges nothing)."""
    return session.scalar(select(EvaluationRow.judge).order_by(EvaluationRow.id.desc()).limit(1))
