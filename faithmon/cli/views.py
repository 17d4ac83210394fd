"""JSON views of stored records: the shape `faithmon traces list --json` promises."""

from __future__ import annotations

from typing import Any

from ..model import Chunk, Judgement, StoredRecord, claim_to_json


def chunk_json(chunk: Chunk) -> dict[str, Any]:
    return {
        "id": chunk.id,
        "text": chunk.text,
        "score": chunk.score,
        "metadata": dict(chunk.metadata),
    }


def evaluation_json(judgement: Judgement) -> dict[str, Any]:
    return {
        "judge": judgement.judge,
        "status": judgement.status,
        "faithfulness": judgement.faithfulness,
        "lenient": judgement.lenient,
        "error": judgement.error,
        # The claim shape the store keeps and `traces show --json` prints.
        "claims": [claim_to_json(c) for c in judgement.claims],
    }


def record_json(stored: StoredRecord, judge_name: str | None = None) -> dict[str, Any]:
    """One record; ``faithfulness`` is the latest evaluation by ``judge_name`` (or any)."""
    record = stored.record
    current = [e for e in stored.evaluations if judge_name is None or e.judge == judge_name]
    latest = current[-1] if current else (stored.evaluations[-1] if stored.evaluations else None)
    return {
        "trace_id": record.trace_id,
        "started_at": record.started_at.isoformat(),
        "question": record.question,
        "answer": record.answer,
        "chunks": [chunk_json(c) for c in record.chunks],
        "labels": dict(record.labels),
        "status": stored.status,
        "sample_reason": record.sample_reason,
        "keep_reason": record.keep,
        "incomplete_reason": record.incomplete,
        "repairs": list(record.repairs),
        "convention": record.convention,
        "retrieved": [chunk_json(c) for c in record.retrieved],
        "generation": dict(record.generation),
        "feedback": [{"value": f.value, "at": f.at.isoformat()} for f in stored.feedback],
        "faithfulness": latest.faithfulness if latest else None,
        "evaluations": [evaluation_json(e) for e in stored.evaluations],
    }
