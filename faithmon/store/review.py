"""The review queue as stored: items made from evaluations, leased to one reviewer at a
time, labelled claim by claim; and what the statistics read back.

A tenant-bound reader (``tenant`` set) sees only its tenant's items and labels; None is an
operator, who sees all. The next item is a walk down ``ix_review_items_next``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta

from sqlalchemy import ColumnElement, Select, and_, func, or_, select, update
from sqlalchemy.orm import Session

from ..model import Judgement, RagRecord
from ..model.review import ClaimLabel, ReviewClaim, Reviewed, ReviewItem, combined
from .evaluations import to_judgement
from .records import to_record
from .tables import EvaluationRow, RecordRow, ReviewCursorRow, ReviewItemRow, ReviewLabelRow

OPEN, DONE, SKIPPED = "open", "done", "skipped"


@dataclass(frozen=True, slots=True)
class Scored:
    """A new evaluation the queue policy looks at."""

    evaluation_id: int
    record_id: int
    trace_id: str
    tenant: str | None
    judgement: Judgement


def new_evaluations(session: Session, judge: str, limit: int = 500) -> list[Scored]:
    """The judge's evaluations after the queue's cursor, oldest first."""
    cursor = session.get(ReviewCursorRow, judge)
    after = cursor.last_evaluation_id if cursor is not None else 0
    rows = session.execute(
        select(EvaluationRow, RecordRow.trace_id, RecordRow.tenant)
        .join(RecordRow, RecordRow.id == EvaluationRow.record_id)
        .where(EvaluationRow.judge == judge, EvaluationRow.id > after)
        .order_by(EvaluationRow.id)
        .limit(limit)
    ).all()
    return [
        Scored(e.id, e.record_id, trace_id, tenant, to_judgement(e)) for e, trace_id, tenant in rows
    ]


def advance(session: Session, judge: str, last_evaluation_id: int) -> None:
    cursor = session.get(ReviewCursorRow, judge)
    if cursor is None:
        session.add(ReviewCursorRow(judge=judge, last_evaluation_id=last_evaluation_id))
    else:
        cursor.last_evaluation_id = max(cursor.last_evaluation_id, last_evaluation_id)


def add_item(
    session: Session,
    scored: Scored,
    reason: str,
    priority: int,
    inclusion_probability: float,
    reviews: int,
    now: datetime,
) -> None:
    session.add(
        ReviewItemRow(
            evaluation_id=scored.evaluation_id,
            record_id=scored.record_id,
            trace_id=scored.trace_id,
            tenant=scored.tenant,
            judge=scored.judgement.judge,
            reason=reason,
            priority=priority,
            inclusion_probability=inclusion_probability,
            reviews_wanted=reviews,
            reviews_done=0,
            status=OPEN,
            created_at=now,
        )
    )


def _claims(evaluation: EvaluationRow) -> tuple[ReviewClaim, ...]:
    return tuple(
        ReviewClaim(
            index=i,
            text=c.text,
            verdict=c.verdict,
            chunk=c.chunk,
            quote=c.quote,
            critical=c.critical,
            stage=c.stage,
            rationale=c.rationale,
            critical_rule=c.critical_rule,
            missing=c.missing,
            citations=c.citations,
            citation=c.citation,
        )
        for i, c in enumerate(to_judgement(evaluation).claims)
    )


def _item(row: ReviewItemRow, evaluation: EvaluationRow | None) -> ReviewItem:
    return ReviewItem(
        id=row.id,
        trace_id=row.trace_id,
        tenant=row.tenant,
        judge=row.judge,
        reason=row.reason,
        priority=row.priority,
        inclusion_probability=row.inclusion_probability,
        reviews_wanted=row.reviews_wanted,
        reviews_done=row.reviews_done,
        status=row.status,
        created_at=row.created_at,
        claims=_claims(evaluation) if evaluation is not None else (),
        lease_owner=row.lease_owner,
        lease_expires=row.lease_expires,
    )


Pairs = Select[ReviewItemRow, EvaluationRow]


def _of(query: Pairs, tenant: str | None) -> Pairs:
    return query if tenant is None else query.where(ReviewItemRow.tenant == tenant)


def _labelled_by(reviewer: str) -> object:
    return (
        select(ReviewLabelRow.id)
        .where(ReviewLabelRow.item_id == ReviewItemRow.id, ReviewLabelRow.reviewer == reviewer)
        .exists()
    )


def queue(
    session: Session, tenant: str | None = None, limit: int = 50, reviewer: str | None = None
) -> list[ReviewItem]:
    """Open items, most urgent first (then oldest); with ``reviewer``, those it may take."""
    query = _of(
        select(ReviewItemRow, EvaluationRow)
        .join(EvaluationRow, EvaluationRow.id == ReviewItemRow.evaluation_id)
        .where(ReviewItemRow.status == OPEN),
        tenant,
    )
    if reviewer is not None:
        query = query.where(~_labelled_by(reviewer))  # type: ignore[operator]
    rows = session.execute(query.order_by(ReviewItemRow.priority, ReviewItemRow.id).limit(limit))
    return [_item(item, evaluation) for item, evaluation in rows]


def _free(reviewer: str, now: datetime) -> ColumnElement[bool]:
    return and_(
        ReviewItemRow.status == OPEN,
        or_(
            ReviewItemRow.lease_expires.is_(None),
            ReviewItemRow.lease_expires <= now,
            ReviewItemRow.lease_owner == reviewer,
        ),
    )


def lease_next(
    session: Session, reviewer: str, now: datetime, seconds: int = 900, tenant: str | None = None
) -> ReviewItem | None:
    """Lease the most urgent open item that nobody holds and ``reviewer`` has not labelled.

    The lease is a conditional update (taken only if the item is still free), so two
    reviewers racing for one item, in one process or two, never both get it; on
    PostgreSQL the candidates another transaction is leasing are skipped besides."""
    query = _of(
        select(ReviewItemRow, EvaluationRow)
        .join(EvaluationRow, EvaluationRow.id == ReviewItemRow.evaluation_id)
        .where(_free(reviewer, now), ~_labelled_by(reviewer)),  # type: ignore[operator]
        tenant,
    ).order_by(ReviewItemRow.priority, ReviewItemRow.id)
    if session.get_bind().dialect.name == "postgresql":
        query = query.with_for_update(of=ReviewItemRow, skip_locked=True)
    until = now + timedelta(seconds=seconds)
    for item, evaluation in session.execute(query.limit(20)).all():
        taken = session.execute(
            update(ReviewItemRow)
            .where(ReviewItemRow.id == item.id, _free(reviewer, now))
            .values(lease_owner=reviewer, lease_expires=until)
            .execution_options(synchronize_session=False)
        )
        if taken.rowcount == 1:  # type: ignore[attr-defined]
            leased = replace(_item(item, evaluation), lease_owner=reviewer, lease_expires=until)
            return leased
    return None


def find(session: Session, trace_id: str, tenant: str | None = None) -> ReviewItem | None:
    """The newest item of a trace (any status)."""
    found = session.execute(
        _of(
            select(ReviewItemRow, EvaluationRow)
            .join(EvaluationRow, EvaluationRow.id == ReviewItemRow.evaluation_id)
            .where(ReviewItemRow.trace_id == trace_id),
            tenant,
        ).order_by(ReviewItemRow.id.desc())
    ).first()
    return None if found is None else _item(found[0], found[1])


def label(
    session: Session,
    item: ReviewItem,
    reviewer: str,
    labels: Sequence[ClaimLabel],
    note: str,
    now: datetime,
) -> ReviewItem:
    """Store ``reviewer``'s labels of ``item`` (its claims' texts as stored, already
    scrubbed); the item is done once it has the reviews it wants."""
    texts = {c.index: c.text for c in item.claims}
    for one in labels:
        session.add(
            ReviewLabelRow(
                item_id=item.id,
                reviewer=reviewer,
                claim_index=one.index,
                part=one.part,
                merged=list(one.merged),
                claim_text=one.text or texts.get(one.index, ""),
                verdict=one.verdict,
                critical=one.critical,
                note=note,
                judge=item.judge,
                created_at=now,
            )
        )
    done = item.reviews_done + 1
    status = DONE if done >= item.reviews_wanted else OPEN
    session.execute(
        update(ReviewItemRow)
        .where(ReviewItemRow.id == item.id)
        .values(reviews_done=done, status=status, lease_owner=None, lease_expires=None)
    )
    return replace(item, reviews_done=done, status=status)


def skip(session: Session, item: ReviewItem) -> None:
    """Take the item out of the queue (a reviewer found it unreviewable)."""
    session.execute(
        update(ReviewItemRow)
        .where(ReviewItemRow.id == item.id)
        .values(status=SKIPPED, lease_owner=None, lease_expires=None)
    )


def labelled_by(session: Session, item_id: int) -> list[str]:
    """The reviewers who labelled an item, in the order they did."""
    rows = session.execute(
        select(ReviewLabelRow.reviewer, func.min(ReviewLabelRow.id))
        .where(ReviewLabelRow.item_id == item_id)
        .group_by(ReviewLabelRow.reviewer)
        .order_by(func.min(ReviewLabelRow.id))
    ).all()
    return [r[0] for r in rows]


def reviewed(session: Session, tenant: str | None = None) -> list[Reviewed]:
    """Every item with labels, as the statistics read it (labels grouped by reviewer in
    the order they labelled; the record's labels as its segment)."""
    query = (
        select(ReviewItemRow, EvaluationRow, RecordRow.labels)
        .join(EvaluationRow, EvaluationRow.id == ReviewItemRow.evaluation_id)
        .join(RecordRow, RecordRow.id == ReviewItemRow.record_id)
        .where(ReviewItemRow.reviews_done > 0)
        .order_by(ReviewItemRow.id)
    )
    if tenant is not None:
        query = query.where(ReviewItemRow.tenant == tenant)
    rows = session.execute(query).all()
    parts: dict[int, dict[str, dict[int, list[tuple[int, str]]]]] = {}
    ids = [item.id for item, _, _ in rows]
    for start in range(0, len(ids), 500):
        for row in session.scalars(
            select(ReviewLabelRow)
            .where(ReviewLabelRow.item_id.in_(ids[start : start + 500]))
            .order_by(ReviewLabelRow.id)
        ):
            by = parts.setdefault(row.item_id, {}).setdefault(row.reviewer, {})
            by.setdefault(row.claim_index, []).append((row.part, row.verdict))
    # A claim a reviewer split is supported only when every part is.
    labels = {
        item_id: {
            who: {i: combined(p) for i, p in claims.items()} for who, claims in by_who.items()
        }
        for item_id, by_who in parts.items()
    }
    out = []
    for item, evaluation, record_labels in rows:
        judgement = to_judgement(evaluation)
        out.append(
            Reviewed(
                judge=item.judge,
                judge_verdicts=tuple(c.verdict for c in judgement.claims),
                labels=labels.get(item.id, {}),
                inclusion_probability=item.inclusion_probability,
                segment={
                    **dict(record_labels or {}),
                    **({"tenant": item.tenant} if item.tenant else {}),
                },
                score=judgement.faithfulness,
                trace_id=item.trace_id,
            )
        )
    return out


def _segment(labels: dict[str, str] | None, tenant: str | None) -> dict[str, str]:
    return {**dict(labels or {}), **({"tenant": tenant} if tenant else {})}


def reviewed_cases(session: Session, tenant: str | None = None) -> list[tuple[RagRecord, Reviewed]]:
    """Each reviewed item's record (scrubbed, as stored) with its labels: what an export
    turns into a sentinel set or an evaluation dataset."""
    items = {r.trace_id: r for r in reviewed(session, tenant)}
    rows = session.scalars(select(RecordRow).where(RecordRow.trace_id.in_(list(items))))
    by_trace = {row.trace_id: to_record(row) for row in rows}
    return [(by_trace[t], items[t]) for t in items if t in by_trace]


def item_record(session: Session, item_id: int) -> RagRecord | None:
    """The record an item was made from (scrubbed, as stored): what its reviewer reads."""
    row = session.scalars(
        select(RecordRow)
        .join(ReviewItemRow, ReviewItemRow.record_id == RecordRow.id)
        .where(ReviewItemRow.id == item_id)
    ).first()
    return None if row is None else to_record(row)


def hold(session: Session, item_id: int) -> None:
    """Lock an item's row until the transaction ends (PostgreSQL; SQLite has one writer),
    so two labellings of one item are decided one after the other; a :func:`find` after it
    reads the row as the lock found it."""
    if session.get_bind().dialect.name == "postgresql":
        session.execute(
            select(ReviewItemRow)
            .where(ReviewItemRow.id == item_id)
            .with_for_update()
            .execution_options(populate_existing=True)
        )
