"""``/api/v1/documents``: the knowledge base seen from its answers. Per source document id
(a chunk's id as the retriever reported it): how often it was passed to the generator,
the share of those answers with an unsupported claim, and the claims that cited it as
contradicted; worst first.

"Worst" is the lower 95% bound of that share, so a document behind one bad answer in one
does not outrank one behind forty in a hundred; then the contradicted claims citing it.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from fastapi import APIRouter, Depends, Query
from pydantic import BaseModel, Field

from ... import drift
from ...store import Sessions, reads_documents
from ._common import (
    MAX_PAGE,
    Caller,
    Page,
    Text,
    UtcTime,
    caller,
    decode_cursor,
    encode_cursor,
)

SortKey = tuple[float, float, int, int, str]


class CitedClaimOut(BaseModel):
    trace_id: str
    text: str
    quote: str | None
    critical: bool


class DocumentOut(BaseModel):
    id: str = Field(description="The document id, as the retriever reported it.")
    passed: int = Field(description="Answers the document was passed to the generator for.")
    scored: int = Field(description="Of those, answers the judge scored.")
    unsupported: int = Field(description="Of the scored, answers with an unsupported claim.")
    unsupported_share: float | None = Field(description="unsupported / scored; null unscored.")
    unsupported_interval: list[float] | None = Field(description="95% Wilson interval.")
    contradicted: int = Field(description="Claims citing the document that it contradicts.")
    contradicted_claims: list[CitedClaimOut] = Field(description="The newest few of them.")
    last_passed_at: datetime


def _sort_key(doc: reads_documents.DocumentUse) -> SortKey:
    low = drift.wilson_interval(doc.unsupported, doc.scored)[0] if doc.scored else 0.0
    share = doc.unsupported / doc.scored if doc.scored else -1.0
    # Ascending order of the key is worst first.
    return (-round(low, 6), -round(share, 6), -doc.contradicted, -doc.passed, doc.doc_id)


def _out(doc: reads_documents.DocumentUse) -> DocumentOut:
    interval = None
    if doc.scored:
        low, high = drift.wilson_interval(doc.unsupported, doc.scored)
        interval = [round(low, 4), round(high, 4)]
    return DocumentOut(
        id=doc.doc_id,
        passed=doc.passed,
        scored=doc.scored,
        unsupported=doc.unsupported,
        unsupported_share=round(doc.unsupported / doc.scored, 4) if doc.scored else None,
        unsupported_interval=interval,
        contradicted=doc.contradicted,
        contradicted_claims=[
            CitedClaimOut(trace_id=c.trace_id, text=c.text, quote=c.quote, critical=c.critical)
            for c in doc.examples
        ],
        last_passed_at=doc.last_passed,
    )


def documents_page(
    sessions: Sessions,
    tenant: str | None,
    since: datetime | None,
    until: datetime | None,
    judge: str | None,
    limit: int,
    cursor: str | None,
) -> Page[DocumentOut]:
    """Source documents, worst first (the API's view; the dashboard renders the same)."""
    v = decode_cursor(cursor, float, float, int, int, str)
    after: SortKey | None = None
    if v is not None:
        after = (float(v[0]), float(v[1]), int(v[2]), int(v[3]), str(v[4]))
    with sessions() as session:
        uses = reads_documents.document_uses(session, tenant, judge, since, until)
    ranked = sorted(((_sort_key(d), d) for d in uses), key=lambda pair: pair[0])
    if after is not None:
        ranked = [pair for pair in ranked if pair[0] > after]
    page = ranked[:limit]
    more = len(ranked) > limit
    return Page[DocumentOut](
        items=[_out(d) for _, d in page],
        next_cursor=encode_cursor(*page[-1][0]) if more else None,
    )


def router(sessions: Sessions) -> APIRouter:
    api = APIRouter(tags=["documents"])

    @api.get("/documents", response_model=Page[DocumentOut])
    def list_documents(
        who: Annotated[Caller, Depends(caller)],
        since: Annotated[UtcTime | None, Query(description="Traces started at or after.")] = None,
        until: Annotated[UtcTime | None, Query(description="Traces started before.")] = None,
        judge: Annotated[
            Text | None, Query(max_length=200, description="Scores of this configuration only.")
        ] = None,
        limit: Annotated[int, Query(ge=1, le=MAX_PAGE)] = 50,
        cursor: Annotated[Text | None, Query(max_length=600)] = None,
    ) -> Page[DocumentOut]:
        """Source documents, worst first, from the traces the caller may see."""
        return documents_page(sessions, who.tenant, since, until, judge, limit, cursor)

    return api
