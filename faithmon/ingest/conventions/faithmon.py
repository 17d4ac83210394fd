"""faithmon's own spans (faithmon_instrumentation): OpenInference plus ``faithmon.*``."""

from __future__ import annotations

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
    )
