"""``/api/v1/traces``: stored RAG records, filtered and paged, and one record whole with
every evaluation of it."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal, get_args

from fastapi import APIRouter, Depends, Path, Query
from pydantic import BaseModel, Field, StringConstraints

from ...model import LABEL_PATTERN, parse_label
from ...model.standing import ProofFloor
from ...store import Sessions, trace_view
from ...store import reads_traces as reads
from ._common import (
    MAX_PAGE,
    NOT_FOUND,
    Caller,
    Page,
    Text,
    UtcTime,
    caller,
    encode_cursor,
    not_found,
    time_cursor,
)

Status = Literal["pending", "scored", "no_context", "incomplete_evidence", "judge_error", "invalid"]
"""A record's status; ``invalid``: the database refused it, stored without its content."""
Verdict = Literal["supported", "contradicted", "unsupported", "partial"]
STATUS_HELP = ", ".join(get_args(Status)[:-1]) + " or " + get_args(Status)[-1]

# ``key=value`` or ``key:value``, checked before any query by the pattern the CLI's parser
# uses too: a label name is spliced into a JSON path (SQLite).
LabelPair = Annotated[str, StringConstraints(pattern=LABEL_PATTERN)]


class TraceItem(BaseModel):
    trace_id: str
    started_at: datetime
    status: str = Field(description=STATUS_HELP)
    faithfulness: float | None = Field(description="Strict score of the shown evaluation.")
    lenient: float | None
    critical: bool = Field(description="The shown evaluation has a critical unsupported claim.")
    judge: str | None = Field(description="Judge configuration of the shown evaluation.")
    labels: dict[str, str]
    question: str


class ChunkOut(BaseModel):
    position: int
    id: str | None = Field(description="The document id, as the retriever reported it.")
    score: float | None
    text: str
    metadata: dict[str, Any]


class Sampling(BaseModel):
    decision: Literal["kept"] = Field(description="Only kept traces are stored.")
    reason: str = Field(description="`sampled` (the ratio) or `rule:<name>` (keep-always).")
    keep_requested: str | None = Field(description="Why the app asked to keep the trace.")


class ClaimOut(BaseModel):
    """A claim as ``model.claim_to_json`` writes it (the shape the store keeps and the CLI
    prints); a test pins these fields to that function's keys."""

    v: int = Field(description="The version of the claim's shape (2; stored before it: 1).")
    text: str
    verdict: Verdict
    chunk: int | None = Field(description="Position of the chunk the claim cites.")
    quote: str | None = Field(description="The evidence span quoted from that chunk.")
    critical: bool
    flags: list[str]
    confidence: float | None = Field(
        default=None, description="How likely the verdict is right; null: the judge did not say."
    )
    stage: Literal["offline", "llm"] | None = Field(
        default=None, description="In a cascade, the judge that decided the claim."
    )
    rationale: str | None = Field(
        default=None, description="The LLM judge's reason for a verdict other than supported."
    )
    critical_rule: str | None = Field(
        default=None,
        description="The severity rule that made the claim critical (amount, date, misquote...).",
    )
    missing: str | None = Field(
        default=None, description="For a partial verdict: the part the chunks do not support."
    )
    citations: list[int] = Field(
        default_factory=list,
        description="Positions of the chunks the claim's citation markers name (0-based).",
    )
    citation: Literal["correct", "wrong", "unresolved", "none"] | None = Field(
        default=None,
        description="Whether the cited chunks support the claim: none when it cites "
        "nothing, unresolved when no marker names a chunk the generator was given; "
        "null: not checked.",
    )


class PolicyOut(BaseModel):
    rule: str = Field(description="The policy rule that matched (pii, secret...).")
    text: str = Field(description="What matched, a short excerpt of the answer.")


class UsageOut(BaseModel):
    calls: int
    prompt_tokens: int
    completion_tokens: int
    retries: int


class GateOut(BaseModel):
    verdict: Literal["pass", "fail", "review"] = Field(
        description="review inside the guard band; else pass at or above the threshold."
    )
    threshold: float
    guard_low: float
    guard_high: float
    segment: str = Field(description="The segment whose threshold applies, or overall.")
    dataset_version: str | None


class EvaluationOut(BaseModel):
    judge: str = Field(description="The judge configuration's fingerprint.")
    status: Literal["ok", "no_claims", "empty_context", "judge_error"]
    faithfulness: float | None
    lenient: float | None
    unsupported: bool
    critical_unsupported: bool
    claims: list[ClaimOut]
    citation_accuracy: float | None = Field(
        default=None,
        description="Claims whose citations support them / claims that cite; null: none cites.",
    )
    unresolved_citations: int = Field(
        default=0, description="Citation markers naming no chunk the generator was given."
    )
    policy: list[PolicyOut] = Field(
        default_factory=list,
        description="What the answer must not disclose and did; never changes the score.",
    )
    context_relevance: float | None = Field(
        default=None,
        description="0-1: how much of what the question asks the chunks passed to the "
        "generator bear on; null: not measured by this judge.",
    )
    answer_relevance: float | None = Field(
        default=None,
        description="0-1: how much of the answer addresses the question; null: not measured.",
    )
    cause: Literal["retrieval", "generation"] | None = Field(
        default=None,
        description="Why an answer with a claim not supported is unfaithful: retrieval (the "
        "chunks lack what the question needs) or generation (they hold it and the answer "
        "strayed); null for a faithful answer or when not measured.",
    )
    abstention: Literal["correct", "missed"] | None = Field(
        default=None,
        description="For an answer that declines: correct (the chunks lack the answer) or "
        "missed (they hold it); null otherwise.",
    )
    error: str | None
    raw: str | None = Field(description="For a judge error: the judge's reply as it came.")
    usage: UsageOut
    latency_ms: float
    created_at: datetime
    trusted: bool = Field(
        description="False when the judge is unproven by its sentinels (below the floor) "
        "or made it while they showed it drifting: stored, not interpreted.",
    )
    gate: GateOut | None = Field(
        default=None,
        description="The verdict of the judge's calibrated threshold in use "
        "(`faithmon review calibrate`); null before any.",
    )


class FeedbackOut(BaseModel):
    value: str | int | float | bool
    at: datetime


class TraceOut(BaseModel):
    trace_id: str
    started_at: datetime
    ingested_at: datetime
    status: str = Field(description=STATUS_HELP)
    question: str
    answer: str
    chunks: list[ChunkOut] = Field(description="As passed to the generator, in order.")
    retrieved: list[ChunkOut] = Field(
        description="As the retriever returned them, when the generator was given others."
    )
    labels: dict[str, str]
    sampling: Sampling
    incomplete_reason: str | None
    convention: str
    repairs: list[str]
    generation: dict[str, Any]
    feedback: list[FeedbackOut]
    evaluations: list[EvaluationOut] = Field(description="Oldest first.")


def _labels(pairs: list[str] | None) -> dict[str, str]:
    # Each pair matched LabelPair already, so each parses.
    return dict(pair for text in pairs or () if (pair := parse_label(text)) is not None)


def router(sessions: Sessions, floor: ProofFloor | None = None) -> APIRouter:
    api = APIRouter(tags=["traces"])
    floor = floor or ProofFloor()

    @api.get("/traces", response_model=Page[TraceItem])
    def list_traces(
        who: Annotated[Caller, Depends(caller)],
        status: Status | None = None,
        label: Annotated[
            list[LabelPair] | None,
            Query(
                description="`key=value` (`key:value` also works); repeat it to ask for "
                "every pair.",
                max_length=20,
            ),
        ] = None,
        since: Annotated[UtcTime | None, Query(description="Started at or after.")] = None,
        until: Annotated[UtcTime | None, Query(description="Started before.")] = None,
        max_score: Annotated[float | None, Query(ge=0, le=1)] = None,
        critical: Annotated[
            bool | None,
            Query(description="true: has a critical unsupported claim; false: has none."),
        ] = None,
        judge: Annotated[
            Text | None, Query(max_length=200, description="Evaluated by this configuration.")
        ] = None,
        limit: Annotated[int, Query(ge=1, le=MAX_PAGE)] = 50,
        cursor: Annotated[Text | None, Query(max_length=200)] = None,
    ) -> Page[TraceItem]:
        """Stored traces, newest first. Scores are those of each trace's newest evaluation
        (by `judge`, when given); `max_score` and `critical` apply to that evaluation."""
        where = reads.TraceFilter(
            tenant=who.tenant,
            status=status,
            labels=_labels(label),
            since=since,
            until=until,
            max_score=max_score,
            critical=critical,
            judge=judge,
        )
        after = time_cursor(cursor)
        with sessions() as session:
            page = reads.list_traces(session, where, limit, after)
        return Page[TraceItem](
            items=[
                TraceItem(
                    trace_id=t.trace_id,
                    started_at=t.started_at,
                    status=t.status,
                    faithfulness=t.faithfulness,
                    lenient=t.lenient,
                    critical=t.critical,
                    judge=t.judge,
                    labels=dict(t.labels),
                    question=t.question,
                )
                for t in page.items
            ],
            next_cursor=(
                encode_cursor(page.next[0].isoformat(), page.next[1]) if page.next else None
            ),
        )

    @api.get("/traces/{trace_id}", response_model=TraceOut, responses=NOT_FOUND)
    def show_trace(
        who: Annotated[Caller, Depends(caller)],
        trace_id: Annotated[str, Path(description="32 hex digits.")],
    ) -> TraceOut:
        """One trace whole: question, chunks, answer, labels, sampling, and every evaluation
        with its claims (another tenant's trace is unknown here: 404)."""
        if len(trace_id) > 32 or "\x00" in trace_id:
            raise not_found("such trace")
        with sessions() as session:
            view = trace_view.load_trace_view(session, trace_id, floor, who.tenant)
        if view is None:
            raise not_found("such trace")
        return TraceOut.model_validate(view)

    return api
