"""A judge's outcomes in trace order: what the drift fold reads.

The fold (:mod:`faithmon.drift.state`) reads the outcomes after its horizon, by the
start index; a rebuild streams them all without holding them.
Evidence (chunk ids) is read only for the few outcomes an alert shows.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Sequence
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import ColumnElement, func, or_, select
from sqlalchemy.orm import Session

from ..model import Outcome
from ._dialect import json_values
from .evaluations import counted, outcome_of
from .records import PENDING
from .tables import EvaluationRow, JudgeTrustRow, RecordRow

_COLUMNS = (
    EvaluationRow.id,
    RecordRow.trace_id,
    RecordRow.started_at,
    RecordRow.labels,
    RecordRow.sample_reason,
    EvaluationRow.claims,
    EvaluationRow.citation_accuracy,
    EvaluationRow.context_relevance,
    EvaluationRow.cause,
)


def _outcome(row: Any, ids: Sequence[str | None] | None = None) -> Outcome:
    seq, trace_id, started_at, labels, reason, claims, accuracy, relevance, cause = row[:9]
    return outcome_of(
        trace_id, started_at, labels, reason, claims, ids, seq, accuracy, relevance, cause
    )


def stream(
    session: Session,
    judge: str,
    *,
    since: datetime | None = None,
    until: datetime | None = None,
    tenants: Collection[str | None] | None = None,
) -> Iterator[Outcome]:
    """``judge``'s counted outcomes of traces after ``since`` and up to ``until``, of
    ``tenants`` (None among them: no tenant), in trace order (start, then trace id)."""
    window: list[ColumnElement[bool]] = []
    if since is not None:
        window.append(RecordRow.started_at > since)
    if until is not None:
        window.append(RecordRow.started_at <= until)
    if tenants is not None:
        named = [t for t in tenants if t]
        wanted: ColumnElement[bool] = RecordRow.tenant.in_(named)
        if len(named) < len(tenants):
            wanted = or_(wanted, RecordRow.tenant.is_(None), RecordRow.tenant == "")
        window.append(wanted)
    if since is not None:
        yield from _after(session, judge, window)
        return
    query = (
        select(*_COLUMNS)
        .join(RecordRow, EvaluationRow.record_id == RecordRow.id)
        .where(counted(session, judge), *window)
        .order_by(RecordRow.started_at, RecordRow.trace_id)
    )
    for row in session.execute(query.execution_options(yield_per=2000)):
        yield _outcome(row)


def _after(session: Session, judge: str, window: list[ColumnElement[bool]]) -> Iterator[Outcome]:
    """The outcomes of a recent window, records first by the start index, then their
    evaluations by record: in one join, SQLite walks every evaluation of the judge (its
    (judge, id) index looks selective to it) and sorts them all."""
    records = select(RecordRow.id).where(*window).order_by(RecordRow.started_at, RecordRow.trace_id)
    ids = list(session.scalars(records))
    for start in range(0, len(ids), 1000):
        batch = ids[start : start + 1000]
        query = (
            select(*_COLUMNS)
            .join(RecordRow, EvaluationRow.record_id == RecordRow.id)
            .where(EvaluationRow.record_id.in_(batch), counted(session, judge))
            .order_by(RecordRow.started_at, RecordRow.trace_id)
        )
        for row in session.execute(query):
            yield _outcome(row)


def by_seq(session: Session, seqs: Collection[int]) -> dict[int, Outcome]:
    """The outcomes of these evaluation ids, with the evidence their alert shows."""
    if not seqs:
        return {}
    chunk_ids = json_values(session, RecordRow.chunks, "id")
    query = (
        select(*_COLUMNS, chunk_ids)
        .join(RecordRow, EvaluationRow.record_id == RecordRow.id)
        .where(EvaluationRow.id.in_(sorted(seqs)))
    )
    return {row[0]: _outcome(row, row[9] or ()) for row in session.execute(query)}


QUIET = timedelta(minutes=5)
"""How long after an hour ends its last traces and sampling counts may still arrive."""

STUCK = timedelta(days=1)
"""A record pending longer than this no longer holds the horizon back (if it is scored
after all, its outcome arrives late and the drift state is rebuilt)."""


def horizon(session: Session, now: datetime) -> datetime:
    """The trace time before which no new outcome is expected: the start of the hour whose
    traces and sampling counts are all in, and no later than the oldest record still
    waiting for the judge."""
    settled = (now - QUIET).replace(minute=0, second=0, microsecond=0)
    waiting = session.scalar(
        select(func.min(RecordRow.started_at)).where(
            RecordRow.status == PENDING, RecordRow.started_at >= now - STUCK
        )
    )
    if waiting is not None and waiting <= settled:
        # Strictly before it, so that record's outcome still lands after the horizon.
        return waiting - timedelta(microseconds=1)
    return settled


def newest_id(session: Session) -> int:
    return int(session.scalar(select(func.max(EvaluationRow.id))) or 0)


def late(session: Session, judge: str, after: int, before: datetime) -> bool:
    """Whether ``judge`` has a counted evaluation newer than id ``after`` of a trace at or
    before ``before``: an outcome behind the drift state's horizon."""
    query = (
        select(EvaluationRow.id)
        .join(RecordRow, EvaluationRow.record_id == RecordRow.id)
        .where(counted(session, judge), EvaluationRow.id > after, RecordRow.started_at <= before)
        .limit(1)
    )
    return session.scalar(query) is not None


def trust_windows(session: Session, judge: str) -> list[str | None]:
    """When ``judge``'s evaluations stopped (and started again) being trusted: what the
    counted outcomes depend on beyond the evaluations themselves."""
    row = session.scalars(select(JudgeTrustRow).where(JudgeTrustRow.judge == judge)).first()
    if row is None:
        return []
    until = row.untrusted_until.isoformat() if row.untrusted_until else None
    return [row.untrusted_since.isoformat(), until]
