"""Source documents as the generator saw them: per chunk id (as the retriever reported it),
how often it was passed, how often the answer it was passed to had an unsupported claim,
and the claims that cited it as contradicted."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import ColumnElement, case, func, select, true
from sqlalchemy.orm import Session, aliased

from ..model import claim_from_json
from . import rules
from ._dialect import json_cited, json_items, json_text, scanned
from .reads_traces import shown_evaluation
from .tables import EvaluationRow, RecordDocumentRow, RecordRow


@dataclass(frozen=True, slots=True)
class CitedClaim:
    """A claim that cited a document, with the trace it is in."""

    trace_id: str
    text: str
    quote: str | None
    critical: bool


@dataclass(frozen=True, slots=True)
class DocumentUse:
    doc_id: str
    passed: int
    """Records whose generator was given the document."""
    scored: int
    """Of those, the ones whose shown evaluation has a score."""
    unsupported: int
    """Of the scored, those with a claim the chunks do not support."""
    contradicted: int
    """Claims citing the document that it contradicts."""
    examples: tuple[CitedClaim, ...]
    """The newest of those claims."""
    last_passed: datetime


def document_uses(
    session: Session,
    tenant: str | None = None,
    judge: str | None = None,
    since: datetime | None = None,
    until: datetime | None = None,
    examples: int = 3,
) -> list[DocumentUse]:
    """Every document id passed to the generator in the window, in no particular order.

    Counted in the database over the document rows written with each record (a record
    passes a document once, however many of its chunks come from it; chunks without an
    id name nothing across records), never its chunks: a row per document comes back, and
    the newest ``examples`` claims citing it as contradicted.
    """
    passes = RecordDocumentRow
    shown, join = shown_evaluation(session, judge, passes.record_id)
    score = shown.faithfulness
    uses = (
        select(
            passes.doc_id,
            func.count(),
            func.count(score),
            func.sum(case((rules.answer_unsupported(score), 1), else_=0)),
            func.max(passes.started_at),
        )
        .select_from(passes)
        .join(shown, join, isouter=judge is None)
        .where(*_window(passes, tenant, since, until))
        .group_by(passes.doc_id)
    )
    cited = _contradicted(session, judge, _window(RecordRow, tenant, since, until), examples)
    return [
        DocumentUse(
            doc_id,
            int(count),
            int(scored),
            int(unsupported or 0),
            cited.get(doc_id, (0, []))[0],
            tuple(cited.get(doc_id, (0, []))[1]),
            last_passed,
        )
        for doc_id, count, scored, unsupported, last_passed in session.execute(uses)
    ]


def _window(
    rows: type[RecordRow] | type[RecordDocumentRow],
    tenant: str | None,
    since: datetime | None,
    until: datetime | None,
) -> list[ColumnElement[bool]]:
    window = []
    if tenant is not None:
        window.append(rows.tenant == tenant)
    if since is not None:
        window.append(rows.started_at >= since)
    if until is not None:
        window.append(rows.started_at < until)
    return window


def _contradicted(
    session: Session,
    judge: str | None,
    window: Sequence[ColumnElement[bool]],
    examples: int,
) -> dict[str, tuple[int, list[CitedClaim]]]:
    """doc id → (claims citing it as contradicted, the newest ``examples`` of them): newest
    trace first, then in the answer's order.

    Read from the evaluations with a claim not supported (only those have one
    contradicted) that are their record's shown one, then those records: their claims and
    chunks, not every record's.
    """
    shown = aliased(EvaluationRow, name="shown")
    latest = select(func.max(EvaluationRow.id)).where(EvaluationRow.record_id == shown.record_id)
    if judge is not None:
        latest = latest.where(EvaluationRow.judge == judge)
    claims, claim, position = json_items(session, shown.claims)
    doc = json_cited(session, RecordRow.chunks, claim, "chunk", "id")
    found = (
        select(
            RecordRow.id,
            RecordRow.started_at,
            RecordRow.trace_id,
            claim.label("claim"),
            position.label("position"),
            doc.label("doc"),
        )
        .select_from(shown)
        # Evaluations first, each record looked up by id (not records walked in full).
        .join(RecordRow, RecordRow.id == scanned(session, shown.record_id))
        .join(claims, true())
        .where(rules.answer_unsupported(shown.faithfulness), shown.id == latest.scalar_subquery())
        .where(json_text(session, claim, "verdict") == "contradicted", *window)
        .subquery()
    )
    newest = (found.c.started_at.desc(), found.c.id.desc(), found.c.position)
    ranked = (
        select(
            found.c.doc,
            found.c.trace_id,
            found.c.claim,
            func.count().over(partition_by=found.c.doc).label("contradicted"),
            func.row_number().over(partition_by=found.c.doc, order_by=newest).label("rank"),
        )
        .where(found.c.doc.is_not(None))
        .subquery()
    )
    # At least one row per document, for its count, whatever ``examples`` is.
    query = select(ranked.c.doc, ranked.c.contradicted, ranked.c.trace_id, ranked.c.claim).where(
        ranked.c.rank <= max(examples, 1)
    )
    cited: dict[str, tuple[int, list[CitedClaim]]] = {}
    for doc_id, count, trace_id, item in session.execute(query):
        shown_claims = cited.setdefault(doc_id, (int(count), []))[1]
        if len(shown_claims) < examples:
            said = claim_from_json(item)
            shown_claims.append(CitedClaim(trace_id, said.text, said.quote, said.critical))
    return cited
