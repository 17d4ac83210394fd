"""Traces as the read API lists and shows them: filtered pages, newest first, and one
trace whole with every evaluation and its timestamps.

A record's *shown* evaluation is its newest one (by the given judge configuration, when
one is given): the list shows its scores and the score filters apply to it, so a row
never shows one evaluation while it was picked by another.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import ColumnElement, Select, and_, exists, func, or_, select, true, type_coerce
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import Session, aliased

from ..model import Feedback, Judgement, RagRecord
from . import rules
from ._dialect import is_postgresql
from .evaluations import to_judgement
from .records import to_record
from .tables import ClaimRow, EvaluationRow, FeedbackRow, RecordRow

Cursor = tuple[datetime, int]
"""(started_at, record id) of the last row of a page: the next page starts after it."""


@dataclass(frozen=True, slots=True)
class TraceFilter:
    tenant: str | None = None
    """Only this tenant's records; None is every tenant (an operator's key)."""
    status: str | None = None
    labels: Mapping[str, str] = field(default_factory=dict)
    since: datetime | None = None
    until: datetime | None = None
    max_score: float | None = None
    """Strict faithfulness of the shown evaluation at most this."""
    unsupported: bool = False
    """Only records whose shown evaluation is unsupported (``rules.answer_unsupported``)."""
    critical: bool | None = None
    """The shown evaluation has (True) or has not (False) a critical unsupported claim."""
    judge: str | None = None
    """Only records this judge configuration evaluated; its evaluation is the one shown."""


@dataclass(frozen=True, slots=True)
class TraceSummary:
    trace_id: str
    started_at: datetime
    status: str
    labels: Mapping[str, str]
    question: str
    judge: str | None
    faithfulness: float | None
    lenient: float | None
    critical: bool


@dataclass(frozen=True, slots=True)
class TracePage:
    items: tuple[TraceSummary, ...]
    next: Cursor | None


@dataclass(frozen=True, slots=True)
class StoredEvaluation:
    judgement: Judgement
    created_at: datetime


@dataclass(frozen=True, slots=True)
class TraceDetail:
    record: RagRecord
    status: str
    ingested_at: datetime
    evaluations: tuple[StoredEvaluation, ...]
    """Oldest first."""
    feedback: tuple[Feedback, ...] = ()


def shown_evaluation(
    session: Session, judge: str | None, record_id: Any = RecordRow.id
) -> tuple[Any, ColumnElement[bool]]:
    """An alias of evaluations and the join condition that picks each record's shown one:
    the record whose id is ``record_id``, a column of an ORM class in the query's FROM."""
    if is_postgresql(session):
        # A LATERAL subquery: PostgreSQL then walks the records in the order asked and
        # looks up each one's newest evaluation, stopping at the page's end. Joined on the
        # max(id) below, it would find the newest evaluation of every record first (a
        # page filtered on the evaluation took 0.2 s at 100,000 records).
        newest = (
            select(EvaluationRow)
            .where(EvaluationRow.record_id == record_id)
            .order_by(EvaluationRow.id.desc())
            .limit(1)
        )
        if judge is not None:
            newest = newest.where(EvaluationRow.judge == judge)
        return aliased(EvaluationRow, newest.lateral("shown")), true()
    shown = aliased(EvaluationRow, name="shown")
    latest = select(func.max(EvaluationRow.id)).where(EvaluationRow.record_id == record_id)
    if judge is not None:
        latest = latest.where(EvaluationRow.judge == judge)
    return shown, shown.id == latest.correlate(record_id.class_).scalar_subquery()


def critical_unsupported(
    session: Session, evaluation_id: Any, faithfulness: Any
) -> ColumnElement[bool]:
    """``Judgement.critical_unsupported`` in SQL: the evaluation has a critical claim that is
    not supported, read from its claim rows by their primary key."""
    found = exists(
        select(1).where(
            ClaimRow.evaluation_id == evaluation_id,
            ClaimRow.critical.is_(True),
            rules.claim_not_supported(ClaimRow.verdict),
        )
    )
    return and_(rules.answer_unsupported(faithfulness), found)


def labels_match(session: Session, labels: Mapping[str, str]) -> list[ColumnElement[bool]]:
    """The conditions a record with every one of ``labels`` meets (none for no labels):
    what the trace list and a segment's series filter on, said once."""
    found = []
    if "tenant" in labels:
        # The column, not the JSON: it is what the tenant index covers.
        found.append(RecordRow.tenant == labels["tenant"])
    pairs = {key: value for key, value in labels.items() if key != "tenant"}
    if pairs:
        found.append(_labels_contain(session, pairs))
    return found


def _labels_contain(session: Session, pairs: Mapping[str, str]) -> ColumnElement[bool]:
    """The record has every one of these labels (ingest stores every label as a string,
    so containment and a per-key text equality select the same records)."""
    if is_postgresql(session):
        # One containment test rather than a ``->>`` equality per key: PostgreSQL
        # estimates ``@>`` from the labels column's statistics (its most common label
        # sets) but can only guess 0.5% per ``->>`` equality. Two guessed labels looked
        # like 25 of 1,000,000 records, so it read the whole table (0.7 s) instead of
        # walking the start index. The GIN index finds label sets too rare for the walk.
        contained: ColumnElement[bool] = type_coerce(RecordRow.labels, JSONB).contains(dict(pairs))
        return contained
    return and_(*(RecordRow.labels[key].as_string() == value for key, value in pairs.items()))


def _filtered(session: Session, where: TraceFilter, shown: Any, join: Any) -> Select[Any]:
    query = select(RecordRow, shown).join(shown, join, isouter=where.judge is None)
    if where.tenant is not None:
        query = query.where(RecordRow.tenant == where.tenant)
    if where.status is not None:
        query = query.where(RecordRow.status == where.status)
    query = query.where(*labels_match(session, where.labels))
    if where.since is not None:
        query = query.where(RecordRow.started_at >= where.since)
    if where.until is not None:
        query = query.where(RecordRow.started_at < where.until)
    if where.max_score is not None:
        query = query.where(shown.faithfulness <= where.max_score)
    if where.unsupported:
        query = query.where(rules.answer_unsupported(shown.faithfulness))
    if where.critical is not None:
        critical = critical_unsupported(session, shown.id, shown.faithfulness)
        query = query.where(critical if where.critical else or_(shown.id.is_(None), ~critical))
    return query


def list_traces(
    session: Session, where: TraceFilter, limit: int, after: Cursor | None = None
) -> TracePage:
    """A page of records matching ``where``, newest first (by start, then id), each with its
    shown evaluation's scores; ``next`` is where the following page starts, if there is one.
    """
    shown, join = shown_evaluation(session, where.judge)
    query = _filtered(session, where, shown, join)
    if after is not None:
        started, record_id = after
        query = query.where(
            or_(
                RecordRow.started_at < started,
                and_(RecordRow.started_at == started, RecordRow.id < record_id),
            )
        )
    query = query.order_by(RecordRow.started_at.desc(), RecordRow.id.desc()).limit(limit + 1)
    rows = session.execute(query).all()
    items = []
    for row, evaluation in rows[:limit]:
        judgement = to_judgement(evaluation) if evaluation is not None else None
        items.append(
            TraceSummary(
                trace_id=row.trace_id,
                started_at=row.started_at,
                status=row.status,
                labels=dict(row.labels),
                question=row.question,
                judge=judgement.judge if judgement else None,
                faithfulness=judgement.faithfulness if judgement else None,
                lenient=judgement.lenient if judgement else None,
                critical=judgement.critical_unsupported if judgement else False,
            )
        )
    last = rows[limit - 1][0] if len(rows) > limit else None
    return TracePage(tuple(items), (last.started_at, last.id) if last is not None else None)


def load_trace(session: Session, trace_id: str, tenant: str | None = None) -> TraceDetail | None:
    """One record whole with its evaluations and feedback; None when there is no such trace
    or it is another tenant's (the caller cannot tell the two apart)."""
    query = select(RecordRow).where(RecordRow.trace_id == trace_id)
    if tenant is not None:
        query = query.where(RecordRow.tenant == tenant)
    row = session.scalars(query).first()
    if row is None:
        return None
    evaluations = session.scalars(
        select(EvaluationRow).where(EvaluationRow.record_id == row.id).order_by(EvaluationRow.id)
    )
    feedback = session.scalars(
        select(FeedbackRow)
        .where(FeedbackRow.trace_id == trace_id)
        .order_by(FeedbackRow.given_at, FeedbackRow.id)
    )
    return TraceDetail(
        record=to_record(row),
        status=row.status,
        ingested_at=row.ingested_at,
        evaluations=tuple(StoredEvaluation(to_judgement(e), e.created_at) for e in evaluations),
        feedback=tuple(Feedback(f.trace_id, f.value, f.given_at) for f in feedback),
    )
