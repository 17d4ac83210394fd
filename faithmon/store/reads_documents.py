"""Source documents as the generator saw them: per chunk id (as the retriever reported it),
how often it was passed, how often the answer it was passed to had an unsupported claim,
and the claims that cited it as contradicted."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import case, null, select
from sqlalchemy.orm import Session

from ._dialect import json_values
from .reads_traces import shown_evaluation
from .tables import RecordRow


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

    Only the chunk ids travel, not the chunk texts; claims only for unsupported answers.
    Chunks without an id are left out: nothing names them across records.
    """
    shown, join = shown_evaluation(judge)
    query = (
        select(
            RecordRow.trace_id,
            RecordRow.started_at,
            json_values(session, RecordRow.chunks, "id"),
            shown.faithfulness,
            case((shown.faithfulness < 1, shown.claims), else_=null()),
        )
        .join(shown, join, isouter=judge is None)
        .order_by(RecordRow.started_at.desc(), RecordRow.id.desc())
    )
    if tenant is not None:
        query = query.where(RecordRow.tenant == tenant)
    if since is not None:
        query = query.where(RecordRow.started_at >= since)
    if until is not None:
        query = query.where(RecordRow.started_at < until)
    tally: dict[str, _Tally] = {}
    for trace_id, started_at, ids, score, claims in session.execute(query):
        chunk_ids: Sequence[Any] = ids or ()
        for doc_id in dict.fromkeys(str(i) for i in chunk_ids if i is not None):
            counts = tally.get(doc_id)
            if counts is None:
                counts = tally[doc_id] = _Tally(started_at)
            counts.passed += 1
            if score is not None:
                counts.scored += 1
                counts.unsupported += score < 1
        for claim in claims or ():
            at = claim.get("chunk")
            if claim.get("verdict") != "contradicted" or not isinstance(at, int):
                continue
            if 0 <= at < len(chunk_ids) and chunk_ids[at] is not None:
                counts = tally[str(chunk_ids[at])]
                counts.contradicted += 1
                if len(counts.examples) < examples:
                    counts.examples.append(
                        CitedClaim(
                            trace_id,
                            str(claim.get("text", "")),
                            claim.get("quote"),
                            bool(claim.get("critical")),
                        )
                    )
    return [
        DocumentUse(
            doc_id,
            t.passed,
            t.scored,
            t.unsupported,
            t.contradicted,
            tuple(t.examples),
            t.last_passed,
        )
        for doc_id, t in tally.items()
    ]


class _Tally:
    __slots__ = ("contradicted", "examples", "last_passed", "passed", "scored", "unsupported")

    def __init__(self, last_passed: datetime) -> None:
        self.last_passed = last_passed
        self.passed = self.scored = self.unsupported = self.contradicted = 0
        self.examples: list[CitedClaim] = []
