"""Turn the spans of one trace into one RagRecord.

Reads faithmon's own spans and the OpenInference attributes they share with
LlamaIndex and LangChain instrumentations: the request (root or CHAIN) span for
the question and answer, the last RETRIEVER/RERANKER span for the chunks, the
LLM span for the model and, failing the root, the answer.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from faithmon_instrumentation import attributes as attr

from ..model import Chunk, RagRecord
from .spans import IngestSpan

_DOC_KEY = re.compile(
    r"^(?:retrieval\.documents|reranker\.output_documents)\.(\d+)\.document\.(\w+)$"
)


def _kind(span: IngestSpan) -> str:
    return str(span.attributes.get(attr.OI_SPAN_KIND, "")).upper()


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value.strip() else None


def _documents(span: IngestSpan) -> tuple[Chunk, ...]:
    fields: dict[int, dict[str, Any]] = {}
    for key, value in span.attributes.items():
        match = _DOC_KEY.match(key)
        if match:
            fields.setdefault(int(match.group(1)), {})[match.group(2)] = value
    chunks = []
    for position, index in enumerate(sorted(fields)):
        doc = fields[index]
        content = doc.get("content")
        if not isinstance(content, str):
            continue
        metadata: Mapping[str, Any] = {}
        raw_meta = doc.get("metadata")
        if isinstance(raw_meta, str):
            try:
                loaded = json.loads(raw_meta)
                metadata = loaded if isinstance(loaded, dict) else {}
            except ValueError:
                metadata = {"raw": raw_meta}
        score = doc.get("score")
        chunks.append(
            Chunk(
                position=position,
                text=content,
                id=None if doc.get("id") is None else str(doc["id"]),
                score=float(score) if isinstance(score, int | float) else None,
                metadata=metadata,
            )
        )
    return tuple(chunks)


def _root(spans: Sequence[IngestSpan]) -> IngestSpan | None:
    for span in spans:
        if span.attributes.get(attr.FAITHMON_ROLE) == attr.ROLE_REQUEST:
            return span
    roots = [s for s in spans if s.parent_span_id is None]
    return min(roots, key=lambda s: s.start_ns) if roots else None


def _label(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def extract(spans: Sequence[IngestSpan]) -> RagRecord | None:
    """Build the trace's RAG record, or None when the trace is not a RAG request."""
    if not spans:
        return None
    ordered = sorted(spans, key=lambda s: (s.end_ns, s.start_ns))
    root = _root(ordered)
    retrievals = [s for s in ordered if _kind(s) in (attr.OI_KIND_RETRIEVER, attr.OI_KIND_RERANKER)]
    llms = [s for s in ordered if _kind(s) == attr.OI_KIND_LLM]
    if root is None and not retrievals:
        return None

    question = None
    answer = None
    if root is not None:
        question = _text(root.attributes.get(attr.INPUT_VALUE))
        answer = _text(root.attributes.get(attr.OUTPUT_VALUE))
    for span in retrievals:
        question = question or _text(
            span.attributes.get(attr.INPUT_VALUE)
            or span.attributes.get(attr.GEN_AI_RETRIEVAL_QUERY_TEXT)
        )
    if llms and answer is None:
        last = llms[-1].attributes
        answer = _text(
            last.get(f"{attr.LLM_OUTPUT_MESSAGES}.0.{attr.MESSAGE_CONTENT}")
            or last.get(attr.OUTPUT_VALUE)
        )
    if question is None and answer is None:
        return None
    if not retrievals and (root is None or _kind(root) not in ("", attr.OI_KIND_CHAIN)):
        return None

    chunks = _documents(retrievals[-1]) if retrievals else ()
    labels: dict[str, str] = {}
    anchor = root or ordered[0]
    service = anchor.resource.get(attr.SERVICE_NAME)
    if service:
        labels["service"] = str(service)
    if llms:
        model = llms[-1].attributes.get(attr.LLM_MODEL_NAME) or llms[-1].attributes.get(
            attr.GEN_AI_REQUEST_MODEL
        )
        if model:
            labels["model"] = str(model)
    if retrievals:
        retrieval = retrievals[-1].attributes
        if retrieval.get(attr.RETRIEVER_NAME):
            labels["retriever"] = str(retrieval[attr.RETRIEVER_NAME])
        if retrieval.get(attr.RETRIEVER_VERSION):
            labels["retriever_version"] = str(retrieval[attr.RETRIEVER_VERSION])
    if root is not None:
        for key, value in root.attributes.items():
            if key.startswith(attr.LABEL_PREFIX) and value is not None:
                labels[key[len(attr.LABEL_PREFIX) :]] = _label(value)

    return RagRecord(
        trace_id=anchor.trace_id,
        question=question or "",
        answer=answer or "",
        chunks=chunks,
        labels=labels,
        started_at=datetime.fromtimestamp(min(s.start_ns for s in spans) / 1e9, tz=UTC),
    )
