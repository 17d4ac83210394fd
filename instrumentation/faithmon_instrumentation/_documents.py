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
from ._chunks import Chunk, metadata_json
from ._log import log_once

# Keys other than the chunks that a documents span carries.
RESERVED_KEYS = 16


def _limits(span: Span) -> tuple[int | None, int | None]:
    """(max attributes, max value length) of an SDK span; (None, None) when unlimited."""
    limits = getattr(span, "_limits", None)
    if limits is None:
        return None, None
    return limits.max_span_attributes, limits.max_span_attribute_length


def _flattened(chunks: Sequence[Chunk], prefix: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for i, chunk in enumerate(chunks):
        out[attr.document_key(i, attr.DOCUMENT_CONTENT, prefix)] = chunk.text
        if chunk.id is not None:
            out[attr.document_key(i, attr.DOCUMENT_ID, prefix)] = chunk.id
        if chunk.score is not None:
            out[attr.document_key(i, attr.DOCUMENT_SCORE, prefix)] = chunk.score
        if chunk.metadata:
            out[attr.document_key(i, attr.DOCUMENT_METADATA, prefix)] = metadata_json(
                chunk.metadata
            )
    return out


def _as_json(chunks: Sequence[Chunk]) -> str:
    return json.dumps(
        [
            {"id": c.id, "score": c.score, "content": c.text, "metadata": dict(c.metadata)}
            for c in chunks
        ],
        default=str,
        ensure_ascii=False,
    )


def document_attributes(span: Span, chunks: Sequence[Chunk], prefix: str) -> dict[str, Any]:
    """The chunk attributes for ``span``, in the order they must be set."""
    max_attributes, max_length = _limits(span)
    if max_length is not None and any(len(c.text) > max_length for c in chunks):
        log_once(
            "value-length-limit",
            f"this TracerProvider cuts attribute values at {max_length} characters, so chunk "
            "text arrives cut and faithmon will not score those requests; call "
            "faithmon_instrumentation.setup() to record through a provider without that limit",
            exc_info=False,
        )
    flattened = _flattened(chunks, prefix)
    if max_attributes is not None and len(flattened) + RESERVED_KEYS > max_attributes:
        documents: dict[str, Any] = {attr.GEN_AI_RETRIEVAL_DOCUMENTS: _as_json(chunks)}
    else:
        documents = flattened
    documents[attr.DOCUMENT_COUNT] = len(chunks)
    documents[attr.DOCUMENT_CHECKS] = attr.document_checks([c.text for c in chunks])
    return documents
