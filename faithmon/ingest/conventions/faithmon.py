"""faithmon's own spans (faithmon_instrumentation): OpenInference plus ``faithmon.*``."""

from __future__ import annotations

from typing import TypeGuard

from faithmon_instrumentation import attributes as attr

from ..spans import IngestSpan
from . import openinference
from .facts import Facts, Role

_ROLES: dict[str, Role] = {
    attr.ROLE_REQUEST: "request",
    attr.ROLE_RETRIEVAL: "retrieval",
    attr.ROLE_RERANK: "rerank",
    attr.ROLE_CONTEXT: "context",
    attr.ROLE_GENERATION: "generation",
}
_EXPECTED: tuple[tuple[str, Role], ...] = (
    (attr.REQUEST_RETRIEVALS, "retrieval"),
    (attr.REQUEST_RERANKS, "rerank"),
    (attr.REQUEST_CONTEXTS, "context"),
)
_NAMED_LABELS = (
    (attr.RETRIEVER_NAME, "retriever"),
    (attr.RETRIEVER_VERSION, "retriever_version"),
    (attr.RERANKER_NAME, "reranker"),
    (attr.RERANKER_VERSION, "reranker_version"),
    (attr.LLM_PROMPT_TEMPLATE_VERSION, "prompt_version"),
)


def _label(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _is_count(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def read(span: IngestSpan) -> Facts | None:
    role_name = span.attributes.get(attr.FAITHMON_ROLE)
    if role_name is None:
        return None
    role = _ROLES.get(str(role_name), "other")
    kind = str(span.attributes.get(attr.OI_SPAN_KIND, "")).upper()
    base = openinference.read_kind(span, kind, "faithmon")
    documents, problem = base.documents, base.problem
    if role == "context":
        documents, problem = openinference.documents(span, attr.RETRIEVAL_DOCUMENTS)
    labels = {
        label: _label(span.attributes[key])
        for key, label in _NAMED_LABELS
        if span.attributes.get(key) not in (None, "")
    }
    if role == "request":
        for key, value in span.attributes.items():
            if key.startswith(attr.LABEL_PREFIX) and value is not None:
                labels[key[len(attr.LABEL_PREFIX) :]] = _label(value)
    keep = span.attributes.get(attr.KEEP)
    expected: dict[Role, int] = {}
    expected_chunks: int | None = None
    if role == "request":
        for key, child in _EXPECTED:
            count = span.attributes.get(key)
            if _is_count(count):
                expected[child] = count
        chunks = span.attributes.get(attr.REQUEST_CHUNKS)
        expected_chunks = chunks if _is_count(chunks) else None
    return Facts(
        "faithmon",
        role,
        question=base.question,
        answer=base.answer,
        documents=documents,
        problem=problem,
        model=base.model,
        generation=base.generation,
        labels=labels,
        keep=str(keep) if keep else None,
        expected=expected,
        expected_chunks=expected_chunks,
    )
