"""One trace whole as plain data: what ``GET /api/v1/traces/{trace_id}`` serves and
``faithmon traces show --json`` prints. Both build it here, from one query, so the two
cannot drift apart; the API only validates it into its response model."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy.orm import Session

from ..model import Chunk, claim_to_json
from ..model.review import gate
from ..model.standing import JudgeStanding, ProofFloor
from . import review_thresholds, sentinels
from .reads_traces import StoredEvaluation, TraceDetail, load_trace


def _chunk(chunk: Chunk) -> dict[str, Any]:
    return {
        "position": chunk.position,
        "id": chunk.id,
        "score": chunk.score,
        "text": chunk.text,
        "metadata": dict(chunk.metadata),
    }


def _evaluation(
    stored: StoredEvaluation, trusted: bool, kept: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    j = stored.judgement
    return {
        "judge": j.judge,
        "status": j.status,
        "faithfulness": j.faithfulness,
        "lenient": j.lenient,
        "unsupported": j.unsupported,
        "critical_unsupported": j.critical_unsupported,
        "claims": [claim_to_json(c) for c in j.claims],
        "citation_accuracy": j.citation_accuracy,
        "unresolved_citations": j.unresolved_citations,
        "policy": [{"rule": f.rule, "text": f.text} for f in j.policy],
        # Null each when the judge did not measure it (older evaluations, other judges).
        "context_relevance": j.relevance.context_relevance if j.relevance else None,
        "answer_relevance": j.relevance.answer_relevance if j.relevance else None,
        "cause": j.relevance.cause if j.relevance else None,
        "abstention": j.relevance.abstention if j.relevance else None,
        "error": j.error,
        "raw": j.raw,
        "usage": {
            "calls": j.usage.calls,
            "prompt_tokens": j.usage.prompt_tokens,
            "completion_tokens": j.usage.completion_tokens,
            "retries": j.usage.retries,
        },
        "latency_ms": j.latency_ms,
        "created_at": stored.created_at,
        "trusted": trusted,
        "gate": gate(j.faithfulness, kept),
    }


def trace_view(
    detail: TraceDetail,
    standings: Mapping[str, JudgeStanding] | None = None,
    thresholds: Mapping[str, Mapping[str, Any]] | None = None,
) -> dict[str, Any]:
    """The trace, times as datetimes; each evaluation ``trusted`` as the standing of its
    judge says (read at the time of asking, so a judge proven later trusts what it scored
    before; a judge with no standing given is trusted), and with the ``gate`` of its
    judge's calibrated threshold in use (``thresholds``: per judge, the one that applies)."""
    record = detail.record
    standings = standings or {}
    thresholds = thresholds or {}

    def trusted(e: StoredEvaluation) -> bool:
        standing = standings.get(e.judgement.judge)
        return standing is None or standing.trusts(e.created_at)

    return {
        "trace_id": record.trace_id,
        "started_at": record.started_at,
        "ingested_at": detail.ingested_at,
        "status": detail.status,
        "question": record.question,
        "answer": record.answer,
        "chunks": [_chunk(c) for c in record.chunks],
        "retrieved": [_chunk(c) for c in record.retrieved],
        "labels": dict(record.labels),
        "sampling": {
            "decision": "kept",
            "reason": record.sample_reason,
            "keep_requested": record.keep,
        },
        "incomplete_reason": record.incomplete,
        "convention": record.convention,
        "repairs": list(record.repairs),
        "generation": dict(record.generation),
        "feedback": [{"value": f.value, "at": f.at} for f in detail.feedback],
        "evaluations": [
            _evaluation(e, trusted(e), thresholds.get(e.judgement.judge))
            for e in detail.evaluations
        ],
    }


def load_trace_view(
    session: Session, trace_id: str, floor: ProofFloor, tenant: str | None = None
) -> dict[str, Any] | None:
    """:func:`trace_view` of the stored trace, each judge's standing against ``floor``;
    None when there is no such trace or it is another tenant's."""
    detail = load_trace(session, trace_id, tenant)
    if detail is None:
        return None
    judges = {e.judgement.judge for e in detail.evaluations}
    standings = {j: sentinels.standing(session, j, floor) for j in judges}
    labels = {f"{k}={v}" for k, v in detail.record.labels.items()}
    thresholds = {}
    for judge in judges:
        # The segment's own threshold when one was calibrated (the one resting on the most
        # reviewed answers if several labels have one), else the judge's overall one.
        kept = review_thresholds.latest_thresholds(session, judge)
        own = [dict(v, segment=k) for k, v in kept.items() if k in labels]
        chosen = max(own, key=lambda v: int(v.get("n") or 0)) if own else kept.get("")
        if chosen:
            thresholds[judge] = chosen
    return trace_view(detail, standings, thresholds)


def _time(value: datetime) -> str:
    # As pydantic writes a time in the API's JSON: UTC as "Z", any other offset as is.
    text = value.isoformat()
    return text[: -len("+00:00")] + "Z" if value.utcoffset() == timedelta(0) else text


def json_ready(value: Any) -> Any:
    """``value`` with every datetime written as the API writes it, for ``json.dumps``."""
    if isinstance(value, datetime):
        return _time(value)
    if isinstance(value, Mapping):
        return {key: json_ready(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [json_ready(item) for item in value]
    return value
