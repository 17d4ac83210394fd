"""``/api/v1/review``: the review queue, leasing the next item with what its reviewer reads,
labelling its claims or skipping it, and how the judges agree with the labels.

Leasing, labelling and skipping need `review` (the guard asks it of every change) and
name the reviewer by the key's name (else its prefix), as an acknowledgement does; a
tenant-bound key sees, leases and labels only its tenant's items (another tenant's trace
is unknown: 404). On an open server no key names anyone: the review page asks a name.
The dashboard's review page (``api/pages/review.py``) makes the same calls through
:func:`next_item`, :func:`label_item` and :func:`skip_item`, so both refuse alike.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, HTTPException, Path, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import Response
from pydantic import BaseModel, Field

from ...model import RagRecord
from ...model.review import ClaimLabel, Label, ReviewItem, item_json, shape_problem
from ...review.agreement import agreement
from ...review.labels import unlabelled
from ...store import Sessions, reads_alerts
from ...store import review as store_review
from ..keys import Grant
from ._common import MAX_ID, MAX_PAGE, NOT_FOUND, Caller, Problem, ReadOptions, Text, caller

LEASE_SECONDS = 900
"""How long a leased item stays its reviewer's (as the CLI's docs say: 15 minutes)."""

DIMENSIONS = ("model", "route", "tenant")
"""Agreement's segments when the read API is not told the drift dimensions."""

# SQLite reads outside its write lock, so two requests of this process could both find an
# item unlabelled and both label it (a lease is a conditional update and needs no lock);
# on PostgreSQL the store's row lock does this across processes too.
_WRITES = threading.Lock()

TraceId = Annotated[str, Path(description="32 hex digits.")]


@dataclass(frozen=True, slots=True)
class Refusal:
    """Why a change was refused: 404, 409 (the item's state) or 422 (the labels)."""

    status: int
    message: str
    where: tuple[str | int, ...] = ()
    """The body field a 422 is about."""


@dataclass(frozen=True, slots=True)
class Leased:
    item: ReviewItem
    record: RagRecord | None


def _known(trace_id: str) -> bool:
    # Longer ids name nothing stored, and PostgreSQL text cannot hold NUL.
    return len(trace_id) <= 32 and "\x00" not in trace_id


def key_name(sessions: Sessions, request: Request) -> str | None:
    """The reviewer a key names: its name, else its prefix (as an acknowledgement names
    it, never the key); None when no key let the request in (an open server)."""
    grant = getattr(request.state, "grant", None)
    if not isinstance(grant, Grant) or not grant.key_id:
        return None
    with sessions() as session:
        return reads_alerts.acknowledger(session, grant.key_id, grant.prefix)


def check_labels(item: ReviewItem, labels: Sequence[ClaimLabel]) -> Refusal | None:
    """Each label names a claim of the item: once, as parts of a split, or in a merge; and
    every claim has one (the rules the CLI checks too)."""
    problem = shape_problem(labels, len(item.claims)) or unlabelled(labels, len(item.claims))
    return None if problem is None else Refusal(422, problem, ("claims",))


def _open(item: ReviewItem, trace_id: str, reviewer: str, now: datetime) -> Refusal | None:
    if item.status != store_review.OPEN:
        return Refusal(409, f"the review item of trace {trace_id} is {item.status}")
    held = item.lease_owner and item.lease_expires and item.lease_expires > now
    if held and item.lease_owner != reviewer and item.lease_expires is not None:
        return Refusal(
            409,
            f"trace {trace_id} is being reviewed by {item.lease_owner} until "
            f"{item.lease_expires:%H:%M} UTC",
        )
    return None


def next_item(
    sessions: Sessions, reviewer: str, tenant: str | None, now: datetime
) -> Leased | None:
    """Lease the most urgent item ``reviewer`` may take; None when nothing is left."""
    with _WRITES, sessions.begin() as session:
        item = store_review.lease_next(session, reviewer, now, LEASE_SECONDS, tenant)
        if item is None:
            return None
        return Leased(item, store_review.item_record(session, item.id))


def find_item(sessions: Sessions, trace_id: str, tenant: str | None) -> Leased | None:
    """A trace's newest item with its record, whatever its state; None when unknown."""
    if not _known(trace_id):
        return None
    with sessions() as session:
        item = store_review.find(session, trace_id, tenant)
        if item is None:
            return None
        return Leased(item, store_review.item_record(session, item.id))


def label_item(
    sessions: Sessions,
    trace_id: str,
    reviewer: str,
    tenant: str | None,
    labels: Sequence[ClaimLabel],
    note: str,
    now: datetime,
) -> ReviewItem | Refusal:
    """Store ``reviewer``'s labels of the trace's open item, or say why not."""
    if not _known(trace_id):
        return Refusal(404, "no such review item")
    with _WRITES, sessions.begin() as session:
        item = store_review.find(session, trace_id, tenant)
        if item is None:
            return Refusal(404, "no such review item")
        store_review.hold(session, item.id)
        item = store_review.find(session, trace_id, tenant) or item  # as it is once held
        problem = _open(item, trace_id, reviewer, now) or check_labels(item, labels)
        if problem is None and reviewer in store_review.labelled_by(session, item.id):
            problem = Refusal(409, f"{reviewer} has already labelled trace {trace_id}")
        if problem is not None:
            return problem
        return store_review.label(session, item, reviewer, labels, note, now)


def skip_item(
    sessions: Sessions, trace_id: str, reviewer: str, tenant: str | None, now: datetime
) -> ReviewItem | Refusal:
    """Take the trace's open item out of the queue, unless another reviewer holds it."""
    if not _known(trace_id):
        return Refusal(404, "no such review item")
    with _WRITES, sessions.begin() as session:
        item = store_review.find(session, trace_id, tenant)
        if item is None:
            return Refusal(404, "no such review item")
        store_review.hold(session, item.id)
        item = store_review.find(session, trace_id, tenant) or item
        problem = _open(item, trace_id, reviewer, now)
        if problem is not None:
            return problem
        store_review.skip(session, item)
    return replace(item, status=store_review.SKIPPED, lease_owner=None, lease_expires=None)


class ReviewClaimOut(BaseModel):
    index: int = Field(description="0-based: what a label names.")
    text: str
    verdict: str = Field(
        description="The judge's: supported, unsupported, contradicted or partial."
    )
    chunk: int | None = Field(description="The cited chunk's 0-based index in `chunks`.")
    quote: str | None = Field(description="The evidence the judge quoted from that chunk.")
    critical: bool = Field(description="A severity rule made it critical (an amount, date...).")
    rationale: str | None = Field(
        default=None, description="The LLM judge's reason for a verdict other than supported."
    )
    critical_rule: str | None = Field(
        default=None, description="The severity rule that made it critical."
    )
    missing: str | None = Field(
        default=None, description="For a partial claim: the part the context does not hold."
    )
    citations: list[int] = Field(
        default_factory=list, description="0-based chunks its citation markers name."
    )
    citation: str | None = Field(
        default=None,
        description="correct, wrong, unresolved or none (uncited); null: not checked.",
    )


class ReviewItemOut(BaseModel):
    trace_id: str
    tenant: str | None
    judge: str = Field(description="The judge configuration whose verdicts are reviewed.")
    reason: str = Field(description="critical, cascade_overruled, low_score or high_score.")
    priority: int = Field(description="0 is the most urgent.")
    inclusion_probability: float = Field(description="How likely the queue was to pick it.")
    reviews_wanted: int
    reviews_done: int
    status: Literal["open", "done", "skipped"]
    created_at: datetime
    claims: list[ReviewClaimOut]


class ReviewChunkOut(BaseModel):
    index: int = Field(description="0-based, in the order the generator saw the chunks.")
    position: int = Field(description="The position the retriever gave it.")
    id: str | None = Field(description="The document id, as the retriever reported it.")
    text: str


class LeasedOut(ReviewItemOut):
    lease_owner: str | None = Field(description="Who holds it: the key's name, else its prefix.")
    lease_expires: datetime | None
    question: str
    chunks: list[ReviewChunkOut]
    answer: str
    labels: dict[str, str] = Field(description="The trace's labels (route, model, ...).")


class LabelledOut(ReviewItemOut):
    reviewer: str
    labelled: int = Field(description="Claims labelled by this call.")


class QueueOut(BaseModel):
    items: list[ReviewItemOut] = Field(description="Not paged: the `limit` most urgent.")


class ClaimLabelIn(BaseModel):
    index: int = Field(ge=0, lt=MAX_ID, description="The claim's `index`.")
    verdict: Label
    critical: bool = Field(default=False, description="Severity, apart from agreement.")
    part: int = Field(
        default=0, ge=0, lt=100, description="For a claim split in parts: which (0, 1, ...)."
    )
    text: Annotated[Text, Field(max_length=2000)] | None = Field(
        default=None, description="The reviewer's wording of a split part or of a merge."
    )
    merged: list[Annotated[int, Field(ge=0, lt=MAX_ID)]] = Field(
        default=[],
        max_length=100,
        description="For claims labelled as one: every merged `index` (one label each).",
    )


class LabelsIn(BaseModel):
    claims: list[ClaimLabelIn] = Field(min_length=1, max_length=1000)
    note: Annotated[Text, Field(max_length=2000)] = ""


class AgreementOut(BaseModel):
    judges: list[dict[str, Any]] = Field(
        description="Per judge configuration: `claim_level`, `answer_level` (κ with its "
        "`ci95`, balanced accuracy, confusion, false acceptance and rejection) and `segments`."
    )
    reviewers: dict[str, Any] = Field(description="κ between the first two reviewers.")


def item_out(item: ReviewItem) -> dict[str, Any]:
    """The item's fields, as ``faithmon review queue --json`` prints them."""
    return item_json(item)


def leased_out(leased: Leased) -> LeasedOut:
    record = leased.record
    return LeasedOut(
        **item_out(leased.item),
        lease_owner=leased.item.lease_owner,
        lease_expires=leased.item.lease_expires,
        question=record.question if record else "",
        chunks=[
            ReviewChunkOut(index=i, position=c.position, id=c.id, text=c.text)
            for i, c in enumerate(record.chunks if record else ())
        ],
        answer=record.answer if record else "",
        labels=dict(record.labels) if record else {},
    )


def _raise(refusal: Refusal) -> HTTPException | RequestValidationError:
    if refusal.status == 422:
        problem = {"type": "value_error", "loc": ("body", *refusal.where), "msg": refusal.message}
        return RequestValidationError([{**problem, "input": None}])
    return HTTPException(status_code=refusal.status, detail=refusal.message)


CHANGES: dict[int | str, dict[str, Any]] = {
    **NOT_FOUND,
    409: {"model": Problem, "description": "The item is done, skipped or another's"},
}
LABELLING = {**CHANGES, 400: {"model": Problem, "description": "The body is not JSON"}}


def router(sessions: Sessions, options: ReadOptions) -> APIRouter:
    api = APIRouter(prefix="/review", tags=["review"])
    dimensions = options.drift.dimensions if options.drift is not None else DIMENSIONS

    @api.get("/queue", response_model=QueueOut)
    def review_queue(
        who: Annotated[Caller, Depends(caller)],
        limit: Annotated[int, Query(ge=1, le=MAX_PAGE)] = 50,
    ) -> QueueOut:
        """Open items, most urgent first, then oldest (a tenant's key sees its own)."""
        with sessions() as session:
            items = store_review.queue(session, who.tenant, limit)
        return QueueOut(items=[ReviewItemOut(**item_out(i)) for i in items])

    @api.post(
        "/next",
        response_model=LeasedOut,
        responses={204: {"description": "Nothing is left for this reviewer"}},
    )
    def review_next(
        request: Request, who: Annotated[Caller, Depends(caller)]
    ) -> LeasedOut | Response:
        """Lease the most urgent item the key has not labelled, for 15 minutes (needs
        `review`): with the question, the chunks as the generator saw them, the answer,
        and the judge's claims with their verdicts, quotes and cited chunks."""
        reviewer = key_name(sessions, request) or who.who
        leased = next_item(sessions, reviewer, who.tenant, datetime.now(UTC))
        if leased is None:
            return Response(status_code=204)
        return leased_out(leased)

    @api.post("/items/{trace_id}/labels", response_model=LabelledOut, responses=LABELLING)
    def review_label(
        request: Request,
        who: Annotated[Caller, Depends(caller)],
        trace_id: TraceId,
        body: LabelsIn,
    ) -> LabelledOut:
        """Label every claim of an open item by their `index` (needs `review`); refused
        when a claim is left out, the key labelled it already or another reviewer holds
        its lease."""
        labels = [
            ClaimLabel(c.index, c.verdict, c.critical, c.part, c.text, tuple(c.merged))
            for c in body.claims
        ]
        now = datetime.now(UTC)
        reviewer = key_name(sessions, request) or who.who
        done = label_item(sessions, trace_id, reviewer, who.tenant, labels, body.note, now)
        if isinstance(done, Refusal):
            raise _raise(done)
        return LabelledOut(**item_out(done), reviewer=reviewer, labelled=len(labels))

    @api.post("/items/{trace_id}/skip", response_model=ReviewItemOut, responses=CHANGES)
    def review_skip(
        request: Request, who: Annotated[Caller, Depends(caller)], trace_id: TraceId
    ) -> ReviewItemOut:
        """Take an open item out of the queue: it cannot be reviewed (needs `review`)."""
        reviewer = key_name(sessions, request) or who.who
        skipped = skip_item(sessions, trace_id, reviewer, who.tenant, datetime.now(UTC))
        if isinstance(skipped, Refusal):
            raise _raise(skipped)
        return ReviewItemOut(**item_out(skipped))

    @api.get("/agreement", response_model=AgreementOut)
    def review_agreement(who: Annotated[Caller, Depends(caller)]) -> AgreementOut:
        """How each judge configuration agrees with the reviewers, weighted for how the
        queue sampled (a tenant's key: over its tenant's labels)."""
        with sessions() as session:
            items = store_review.reviewed(session, who.tenant)
        return AgreementOut(**agreement(items, dimensions))

    return api
