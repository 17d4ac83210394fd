"""Evaluations: a judge's verdict on a record, stored once per (record, judge configuration),
and read back as the outcomes drift detects on."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import ColumnElement, and_, case, insert, null, or_, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from ..errors import RecordGone
from ..model import (
    BAD_CITATIONS,
    Cause,
    Claim,
    Evidence,
    Judgement,
    Outcome,
    PolicyFinding,
    Relevance,
    Usage,
    claim_from_json,
    claim_supported,
    claim_to_json,
)
from . import rules
from ._dialect import insert_for, json_values, savepoint
from .records import JUDGE_ERROR, SCORED
from .tables import ClaimRow, EvaluationRow, JudgeTrustRow, RecordRow

UNSUPPORTED = rules.answer_unsupported(EvaluationRow.faithfulness)
"""``Judgement.unsupported`` on the stored evaluation."""

MISCITED = EvaluationRow.citation_accuracy < 1
"""The answer cites and a citation is wrong or unresolved: bad on the citation stream."""


def to_claims(items: Sequence[dict[str, Any]]) -> tuple[Claim, ...]:
    """The stored claims of an evaluation, whichever version of the shape each was
    written in (``model.claim_from_json``)."""
    return tuple(claim_from_json(c) for c in items)


def to_policy(items: Sequence[dict[str, Any]] | None) -> tuple[PolicyFinding, ...]:
    return tuple(PolicyFinding(str(f["rule"]), str(f["text"])) for f in items or ())


def to_judgement(row: EvaluationRow) -> Judgement:
    return Judgement(
        judge=row.judge,
        status=row.status,  # type: ignore[arg-type]
        claims=to_claims(row.claims),
        error=row.error,
        raw=row.raw,
        usage=Usage(**row.usage),
        latency_ms=row.latency_ms,
        unresolved_citations=row.unresolved_citations or 0,
        policy=to_policy(row.policy),
        relevance=to_relevance(row),
    )


def to_relevance(row: EvaluationRow) -> Relevance | None:
    """The stored relevance, None when the judge measured none of it (every column is
    null: older evaluations and judges without the measures)."""
    measured = (row.context_relevance, row.answer_relevance, row.cause, row.abstention)
    if all(v is None for v in measured):
        return None
    return Relevance(
        context_relevance=row.context_relevance,
        answer_relevance=row.answer_relevance,
        cause=row.cause,  # type: ignore[arg-type]
        abstention=row.abstention,  # type: ignore[arg-type]
    )


def relevance_columns(relevance: Relevance | None) -> dict[str, Any]:
    """The evaluation's relevance columns; all null when the judge did not measure it."""
    if relevance is None:
        relevance = Relevance()
    return {
        "context_relevance": relevance.context_relevance,
        "answer_relevance": relevance.answer_relevance,
        "cause": relevance.cause,
        "abstention": relevance.abstention,
    }


def save_evaluation(session: Session, record_id: int, judgement: Judgement) -> bool:
    """Store a judgement once per (record, judge) and settle the record's status."""
    row = {
        "record_id": record_id,
        "judge": judgement.judge,
        "status": judgement.status,
        "faithfulness": judgement.faithfulness,
        "lenient": judgement.lenient,
        "claims": [claim_to_json(c) for c in judgement.claims],
        "error": judgement.error,
        "raw": judgement.raw,
        "usage": asdict(judgement.usage),
        "latency_ms": judgement.latency_ms,
        "created_at": datetime.now(UTC),
        "citation_accuracy": judgement.citation_accuracy,
        "unresolved_citations": judgement.unresolved_citations,
        "policy": [asdict(f) for f in judgement.policy],
        **relevance_columns(judgement.relevance),
    }
    statement = insert_for(session, EvaluationRow).on_conflict_do_nothing(
        index_elements=["record_id", "judge"]
    )
    created = session.execute(statement.returning(EvaluationRow.id), [row]).scalars().all()
    inserted = len(created) > 0
    if inserted and judgement.claims:
        session.execute(insert(ClaimRow), _claim_rows(created[0], record_id, judgement))
    status = JUDGE_ERROR if judgement.status == "judge_error" else SCORED
    session.execute(
        update(RecordRow)
        .where(RecordRow.id == record_id)
        .values(status=status, lease_owner=None, lease_expires=None)
    )
    return inserted


MAX_POSITION = 999_999_999


def _position(chunk: object) -> int | None:
    # A judge may cite any number; only a possible chunk position goes in the column (the
    # claim's JSON keeps what it said).
    if isinstance(chunk, int) and not isinstance(chunk, bool) and 0 <= chunk <= MAX_POSITION:
        return chunk
    return None


def _claim_rows(evaluation_id: int, record_id: int, judgement: Judgement) -> list[dict[str, Any]]:
    return [
        {
            "evaluation_id": evaluation_id,
            "position": position,
            "record_id": record_id,
            "judge": judgement.judge,
            "verdict": claim.verdict,
            "chunk": _position(claim.chunk),
            "critical": claim.critical,
            "stage": claim.stage,
            "confidence": claim.confidence,
        }
        for position, claim in enumerate(judgement.claims)
    ]


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

    With ``evidence`` each unsupported or miscited one carries what its alert shows, read
    here with the rest, so nothing is looked up again for the alert. The outcomes weigh 1:
    their sampling weights are drift's to give (``drift.weigh``, from ``sampling_counts``).
    """
    chunk_ids: ColumnElement[Any] = null()
    if evidence:
        ids = json_values(session, RecordRow.chunks, "id")
        chunk_ids = case((or_(UNSUPPORTED, MISCITED), ids), else_=None)
    query = (
        select(
            RecordRow.trace_id,
            RecordRow.started_at,
            RecordRow.labels,
            RecordRow.sample_reason,
            EvaluationRow.claims,
            chunk_ids,
            EvaluationRow.citation_accuracy,
            EvaluationRow.context_relevance,
            EvaluationRow.cause,
        )
        .join(EvaluationRow, EvaluationRow.record_id == RecordRow.id)
        .where(counted(session, judge))
        .order_by(RecordRow.started_at, RecordRow.id)
    )
    if since is not None:
        query = query.where(RecordRow.started_at >= since)
    return [
        outcome_of(
            trace_id,
            started_at,
            labels,
            reason,
            claims,
            (ids or ()) if evidence else None,
            citation_accuracy=accuracy,
            context_relevance=relevance,
            cause=cause,
        )
        for (
            trace_id,
            started_at,
            labels,
            reason,
            claims,
            ids,
            accuracy,
            relevance,
            cause,
        ) in session.execute(query)
    ]


def outcome_of(
    trace_id: str,
    started_at: datetime,
    labels: dict[str, str],
    reason: str,
    claims: Sequence[dict[str, Any]],
    chunk_ids: Sequence[str | None] | None = None,
    seq: int = 0,
    citation_accuracy: float | None = None,
    context_relevance: float | None = None,
    cause: str | None = None,
) -> Outcome:
    """A stored evaluation as a drift outcome; with ``chunk_ids`` an unsupported or
    miscited one carries the evidence its alert shows. ``citation_accuracy`` is the stored
    column: None when the answer cites nothing (no observation of the citation stream);
    ``context_relevance`` likewise for the retrieval stream."""
    judgement = Judgement("", "ok", to_claims(claims))
    doubtful = judgement.not_supported
    miscited = citation_accuracy is not None and citation_accuracy < 1
    wrong = tuple(c for c in judgement.claims if c.citation in BAD_CITATIONS)
    evidence = None
    if chunk_ids is not None and (judgement.unsupported or miscited):
        # One evidence for every stream: each alert shows the claims bad on its own.
        shown = (
            c
            for c in judgement.claims
            if not claim_supported(c.verdict) or c.citation in BAD_CITATIONS
        )
        evidence = _evidence(chunk_ids, tuple(shown))
    return Outcome(
        trace_id=trace_id,
        at=started_at,
        labels=labels,
        unsupported=judgement.unsupported,
        unsupported_claims=tuple(c.text for c in doubtful),
        critical=judgement.critical_unsupported,
        sample_reason=reason,
        evidence=evidence,
        seq=seq,
        cited=citation_accuracy is not None,
        miscited=miscited,
        miscited_claims=tuple(c.text for c in wrong) if miscited else (),
        context_relevance=context_relevance,
        cause=_CAUSES.get(cause or "") if judgement.unsupported else None,
    )


_CAUSES: dict[str, Cause] = {"retrieval": "retrieval", "generation": "generation"}
"""A stored cause as the model's: anything else read back is no cause."""


def latest_judge(session: Session) -> str | None:
    """The judge configuration that wrote the newest evaluation: the one a reader of the
    dashboard sees scores of (the server itself judges nothing)."""
    return session.scalar(select(EvaluationRow.judge).order_by(EvaluationRow.id.desc()).limit(1))


def recent_statuses(
    session: Session, judge: str, since: datetime, limit: int = 200
) -> list[tuple[str, str | None]]:
    """(status, error) of the judge's newest evaluations made since ``since``, at most
    ``limit`` (newest first: a walk down ``ix_evaluations_judge_id``)."""
    rows = session.execute(
        select(EvaluationRow.status, EvaluationRow.error, EvaluationRow.created_at)
        .where(EvaluationRow.judge == judge)
        .order_by(EvaluationRow.id.desc())
        .limit(limit)
    ).all()
    return [(r.status, r.error) for r in rows if r.created_at >= since]
