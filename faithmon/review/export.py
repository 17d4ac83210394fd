"""Reviewed cases as data for other tools: a sentinel set (faithmon's own JSONL, which
``faithmon sentinel add`` loads), or an evaluation dataset for RAGAS or DeepEval. The
record's text is as stored, so scrubbed; the people's verdict is the answer-level
consensus (an answer two reviewers judged differently is left out)."""

from __future__ import annotations

from typing import Any

from ..model import RagRecord
from ..model.review import Reviewed

FORMATS = ("sentinel", "ragas", "deepeval")


def consensus(item: Reviewed) -> bool | None:
    """Whether the reviewers passed the answer (every labelled claim supported); None
    when they disagree or labelled nothing."""
    verdicts = {
        all(v == "supported" for v in labels.values()) for labels in item.labels.values() if labels
    }
    return verdicts.pop() if len(verdicts) == 1 else None


def _claims(item: Reviewed) -> list[dict[str, Any]]:
    labels = item.first()
    return [{"index": i, "label": labels[i]} for i in sorted(labels)]


def row(record: RagRecord, item: Reviewed, form: str) -> dict[str, Any] | None:
    """One line of the export in ``form`` (None: no consensus to export)."""
    passed = consensus(item)
    if passed is None:
        return None
    chunks = [c.text for c in record.chunks]
    if form == "ragas":
        return {
            "user_input": record.question,
            "retrieved_contexts": chunks,
            "response": record.answer,
            "human_faithful": passed,
            "claim_labels": _claims(item),
        }
    if form == "deepeval":
        return {
            "input": record.question,
            "actual_output": record.answer,
            "retrieval_context": chunks,
            "additional_metadata": {"human_faithful": passed, "claim_labels": _claims(item)},
        }
    return {
        "id": record.trace_id,
        "question": record.question,
        "chunks": chunks,
        "answer": record.answer,
        "expected": "supported" if passed else "unsupported",
    }
