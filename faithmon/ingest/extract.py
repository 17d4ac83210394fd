"""Turn the spans of one trace into one RagRecord (and feedback spans into Feedback).

Reads faithmon's own spans and the OpenInference attributes they share with
LlamaIndex and LangChain instrumentations: the request (root or CHAIN) span for
the question and answer; for the judged chunks, an explicit context span, else
the last RERANKER span, else the last RETRIEVER span; the LLM span for the
model, its settings and, failing the root, the answer.

Evidence is checked before anything else touches it: when the shim's chunk
count and length/CRC checks do not match what arrived, or a span reports
dropped attributes, the record is marked incomplete and is never scored.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from faithmon_instrumentation import attributes as attr

from ..model import Chunk, Feedback, RagRecord
from .spans import IngestSpan

_DOC_KEY = re.compile(
    r"^(?:retrieval\.documents|reranker\.output_documents)\.(\d+)\.document\.(\w+)$"
)
_DOCUMENT_KINDS = (attr.OI_KIND_RETRIEVER, attr.OI_KIND_RERANKER)


def _kind(span: IngestSpan) -> str:
    return str(span.attributes.get(attr.OI_SPAN_KIND, "")).upper()


def _role(span: IngestSpan) -> str:
    return str(span.attributes.get(attr.FAITHMON_ROLE, ""))


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value.strip() else None


def _metadata(raw: Any) -> Mapping[str, Any]:
    if isinstance(raw, Mapping):
        return dict(raw)
    if isinstance(raw, str):
        try:
            loaded = json.loads(raw)
        except ValueError:
            return {"raw": raw}
        return loaded if isinstance(loaded, dict) else {"raw": raw}
    return {}


def _chunk(position: int, doc: Mapping[str, Any]) -> Chunk | None:
    content = doc.get("content", doc.get("text", doc.get("page_content")))
    if not isinstance(content, str):
        return None
    score = doc.get("score")
    return Chunk(
        position=position,
        text=content,
        id=None if doc.get("id") is None else str(doc["id"]),
        score=float(score) if isinstance(score, int | float) else None,
        metadata=_metadata(doc.get("metadata")),
    )


def _documents(span: IngestSpan) -> tuple[Chunk, ...]:
    packed = span.attributes.get(attr.GEN_AI_RETRIEVAL_DOCUMENTS)
    if isinstance(packed, str):
        try:
            packed = json.loads(packed)
        except ValueError:
            packed = None
    if isinstance(packed, list):
        docs = [d for d in packed if isinstance(d, Mapping)]
    else:
        fields: dict[int, dict[str, Any]] = {}
        for key, value in span.attributes.items():
            match = _DOC_KEY.match(key)
            if match:
                fields.setdefault(int(match.group(1)), {})[match.group(2)] = value
        docs = [fields[i] for i in sorted(fields)]
    chunks = (_chunk(i, doc) for i, doc in enumerate(docs))
    return tuple(c for c in chunks if c is not None)


def _evidence_problem(span: IngestSpan, chunks: Sequence[Chunk]) -> str | None:
    if span.dropped_attributes:
        return f"span {span.name!r} dropped {span.dropped_attributes} attributes"
    expected_count = span.attributes.get(attr.DOCUMENT_COUNT)
    if isinstance(expected_count, int) and expected_count != len(chunks):
        return f"{len(chunks)} of {expected_count} chunks arrived"
    checks = span.attributes.get(attr.DOCUMENT_CHECKS)
    if isinstance(checks, str) and checks != attr.document_checks([c.text for c in chunks]):
        expected = checks.split(",")
        actual = attr.document_checks([c.text for c in chunks]).split(",")
        cut = sum(a != b for a, b in zip(expected, actual, strict=False))
        return f"{cut or 'some'} of {len(chunks)} chunks arrived cut or altered"
    return None


def _root(spans: Sequence[IngestSpan]) -> IngestSpan | None:
    for span in spans:
        if _role(span) == attr.ROLE_REQUEST:
            return span
    roots = [s for s in spans if s.parent_span_id is None]
    return min(roots, key=lambda s: s.start_ns) if roots else None


def _label(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _generation(llm: IngestSpan | None) -> dict[str, Any]:
    if llm is None:
        return {}
    raw = llm.attributes.get(attr.LLM_INVOCATION_PARAMETERS)
    if isinstance(raw, str):
        try:
            loaded = json.loads(raw)
            if isinstance(loaded, dict):
                return loaded
        except ValueError:
            pass
    prefix = attr.GEN_AI_REQUEST_PREFIX
    return {
        k[len(prefix) :]: v
        for k, v in llm.attributes.items()
        if k.startswith(prefix) and k != attr.GEN_AI_REQUEST_MODEL
    }


def _labels(
    root: IngestSpan | None,
    anchor: IngestSpan,
    llm: IngestSpan | None,
    retrieval: IngestSpan | None,
    rerank: IngestSpan | None,
) -> dict[str, str]:
    labels: dict[str, str] = {}
    service = anchor.resource.get(attr.SERVICE_NAME)
    if service:
        labels["service"] = str(service)
    if llm is not None:
        model = llm.attributes.get(attr.LLM_MODEL_NAME) or llm.attributes.get(
            attr.GEN_AI_REQUEST_MODEL
        )
        if model:
            labels["model"] = str(model)
        prompt_version = llm.attributes.get(attr.LLM_PROMPT_TEMPLATE_VERSION)
        if prompt_version:
            labels["prompt_version"] = str(prompt_version)
    names = (
        (retrieval, attr.RETRIEVER_NAME, "retriever"),
        (retrieval, attr.RETRIEVER_VERSION, "retriever_version"),
        (rerank, attr.RERANKER_NAME, "reranker"),
        (rerank, attr.RERANKER_VERSION, "reranker_version"),
    )
    for span, key, label in names:
        if span is not None and span.attributes.get(key):
            labels[label] = str(span.attributes[key])
    if root is not None:
        for key, value in root.attributes.items():
            if key.startswith(attr.LABEL_PREFIX) and value is not None:
                labels[key[len(attr.LABEL_PREFIX) :]] = _label(value)
    return labels


def extract(spans: Sequence[IngestSpan]) -> RagRecord | None:
    """Build the trace's RAG record, or None when the trace is not a RAG request."""
    spans = [s for s in spans if _role(s) != attr.ROLE_FEEDBACK]
    if not spans:
        return None
    ordered = sorted(spans, key=lambda s: (s.end_ns, s.start_ns))
    root = _root(ordered)
    contexts = [s for s in ordered if _role(s) == attr.ROLE_CONTEXT]
    retrievals = [s for s in ordered if _kind(s) == attr.OI_KIND_RETRIEVER]
    reranks = [s for s in ordered if _kind(s) == attr.OI_KIND_RERANKER]
    llms = [s for s in ordered if _kind(s) == attr.OI_KIND_LLM]
    candidates = contexts or reranks or retrievals
    evidence_span = candidates[-1] if candidates else None
    if root is None and evidence_span is None:
        return None

    question = None
    answer = None
    if root is not None:
        question = _text(root.attributes.get(attr.INPUT_VALUE))
        answer = _text(root.attributes.get(attr.OUTPUT_VALUE))
    for span in [*retrievals, *reranks]:
        question = question or _text(
            span.attributes.get(attr.INPUT_VALUE)
            or span.attributes.get(attr.GEN_AI_RETRIEVAL_QUERY_TEXT)
            or span.attributes.get(attr.RERANKER_QUERY)
        )
    llm = llms[-1] if llms else None
    if llm is not None and answer is None:
        answer = _text(
            llm.attributes.get(f"{attr.LLM_OUTPUT_MESSAGES}.0.{attr.MESSAGE_CONTENT}")
            or llm.attributes.get(attr.OUTPUT_VALUE)
        )
    if question is None and answer is None:
        return None
    if evidence_span is None and (root is None or _kind(root) not in ("", attr.OI_KIND_CHAIN)):
        return None

    chunks = _documents(evidence_span) if evidence_span is not None else ()
    problem = _evidence_problem(evidence_span, chunks) if evidence_span is not None else None
    if problem is None and root is not None and root.dropped_attributes:
        problem = f"request span dropped {root.dropped_attributes} attributes"
    retrieved: tuple[Chunk, ...] = ()
    if retrievals and evidence_span is not retrievals[-1]:
        retrieved = _documents(retrievals[-1])
    anchor = root or ordered[0]
    keep = root.attributes.get(attr.KEEP) if root is not None else None
    return RagRecord(
        trace_id=anchor.trace_id,
        question=question or "",
        answer=answer or "",
        chunks=chunks,
        labels=_labels(
            root,
            anchor,
            llm,
            retrievals[-1] if retrievals else None,
            reranks[-1] if reranks else None,
        ),
        started_at=datetime.fromtimestamp(min(s.start_ns for s in spans) / 1e9, tz=UTC),
        retrieved=retrieved,
        generation=_generation(llm),
        keep=str(keep) if keep else None,
        incomplete=problem,
    )


def extract_feedback(spans: Sequence[IngestSpan]) -> list[Feedback]:
    """Feedback spans (``faithmon_instrumentation.record_feedback``) in the trace."""
    found = []
    for span in spans:
        if _role(span) != attr.ROLE_FEEDBACK:
            continue
        trace_id = span.attributes.get(attr.FEEDBACK_TRACE_ID)
        value = span.attributes.get(attr.FEEDBACK_VALUE)
        if not isinstance(trace_id, str) or not re.fullmatch(r"[0-9a-f]{32}", trace_id):
            continue
        if not isinstance(value, str | int | float | bool):
            continue
        found.append(
            Feedback(
                trace_id=trace_id,
                value=value,
                at=datetime.fromtimestamp(span.start_ns / 1e9, tz=UTC),
            )
        )
    return found
