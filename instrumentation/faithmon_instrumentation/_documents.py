"""Chunks → span attributes that survive the provider's limits, or say they did not.

OpenInference flattens each chunk into up to four keys. The SDK keeps at most
``max_span_attributes`` per span (128 by default) and evicts the *oldest* keys
past it, so 50 chunks on an app's default provider would lose the span kind,
the query and the top-ranked chunks. When the flattened keys would not fit the
span's budget, the chunks go into one JSON attribute instead. Either way a
count and per-chunk length/CRC checks are set last, so the backend can tell
when a value-length limit (or anything on the way) cut a chunk.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from opentelemetry.trace import Span

from . import attributes as attr
from ._chunks import Doc, metadata_json
from ._log import log_once

# Keys other than the chunks that a documents span carries.
RESERVED_KEYS = 16


def _limits(span: Span) -> tuple[int | None, int | None]:
    """(max attributes, max value length) of an SDK span; (None, None) when unlimited."""
    limits = getattr(span, "_limits", None)
    if limits is None:
        return None, None
    return limits.max_span_attributes, limits.max_span_attribute_length


def _flattened(docs: Sequence[Doc], prefix: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for i, (text, doc_id, score, metadata) in enumerate(docs):
        # Same keys as attr.document_key, built inline: this loop is the shim's hot path.
        key = f"{prefix}.{i}.document."
        out[key + "content"] = text
        if doc_id is not None:
            out[key + "id"] = doc_id
        if score is not None:
            out[key + "score"] = score
        if metadata:
            out[key + "metadata"] = metadata_json(metadata)
    return out


def _as_json(docs: Sequence[Doc]) -> str:
    return json.dumps(
        [
            {"id": doc_id, "score": score, "content": text, "metadata": dict(metadata)}
            for text, doc_id, score, metadata in docs
        ],
        default=str,
        ensure_ascii=False,
    )


def document_attributes(span: Span, docs: Sequence[Doc], prefix: str) -> dict[str, Any]:
    """The chunk attributes for ``span``, in the order they must be set."""
    max_attributes, max_length = _limits(span)
    if max_length is not None and any(len(d[0]) > max_length for d in docs):
        log_once(
            "value-length-limit",
            f"this TracerProvider cuts attribute values at {max_length} characters, so chunk "
            "text arrives cut and faithmon will not score those requests; call "
            "faithmon_instrumentation.setup() to record through a provider without that limit",
            exc_info=False,
        )
    flattened = _flattened(docs, prefix)
    if max_attributes is not None and len(flattened) + RESERVED_KEYS > max_attributes:
        documents: dict[str, Any] = {attr.GEN_AI_RETRIEVAL_DOCUMENTS: _as_json(docs)}
    else:
        documents = flattened
    documents[attr.DOCUMENT_COUNT] = len(docs)
    documents[attr.DOCUMENT_CHECKS] = attr.document_checks([d[0] for d in docs])
    return documents
