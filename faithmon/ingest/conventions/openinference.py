"""OpenInference (Arize): CHAIN, RETRIEVER, RERANKER and LLM spans.

LlamaIndex's retriever spans carry id, content, score and metadata per
document; LangChain's carry content and metadata only.
"""

from __future__ import annotations

from typing import Any

from ..spans import IngestSpan
from . import values as v
from .facts import Facts, Role

KIND = "openinference.span.kind"
INPUT_VALUE = "input.value"
INPUT_MIME = "input.mime_type"
OUTPUT_VALUE = "output.value"
OUTPUT_MIME = "output.mime_type"
RETRIEVAL_DOCUMENTS = "retrieval.documents"
RERANKER_OUTPUT = "reranker.output_documents"
RERANKER_QUERY = "reranker.query"
LLM_MODEL_NAME = "llm.model_name"
LLM_INVOCATION_PARAMETERS = "llm.invocation_parameters"
LLM_INPUT_MESSAGES = "llm.input_messages"
LLM_OUTPUT_MESSAGES = "llm.output_messages"
PACKED_DOCUMENTS = "gen_ai.retrieval.documents"


def _value(span: IngestSpan, key: str, mime_key: str, keys: tuple[str, ...]) -> str | None:
    raw = span.attributes.get(key)
    if span.attributes.get(mime_key) == "application/json":
        return v.pick(v.loads(raw), keys)
    return v.text(raw)


def documents(span: IngestSpan, prefix: str) -> tuple[tuple[Any, ...] | None, str | None]:
    """(chunks, problem): packed JSON when present, else the flattened keys."""
    packed = span.attributes.get(PACKED_DOCUMENTS)
    if packed is not None:
        docs, unreadable = v.json_documents(packed)
    else:
        flattened, unreadable = v.flattened_documents(span, prefix)
        docs = flattened or ()
    return docs, v.evidence_problem(span, docs, unreadable)


def read_kind(span: IngestSpan, kind: str, convention: str) -> Facts:
    attributes = span.attributes
    if kind == "RETRIEVER":
        docs, problem = documents(span, RETRIEVAL_DOCUMENTS)
        return Facts(
            convention,
            "retrieval",
            question=_value(span, INPUT_VALUE, INPUT_MIME, v.QUESTION_KEYS),
            documents=docs,
            problem=problem,
        )
    if kind == "RERANKER":
        docs, problem = documents(span, RERANKER_OUTPUT)
        return Facts(
            convention,
            "rerank",
            question=v.text(attributes.get(RERANKER_QUERY)),
            documents=docs,
            problem=problem,
        )
    if kind == "LLM":
        parameters = v.loads(attributes.get(LLM_INVOCATION_PARAMETERS))
        answer = v.indexed_messages(span, LLM_OUTPUT_MESSAGES, "assistant")
        if answer is None and attributes.get(OUTPUT_MIME) != "application/json":
            answer = v.text(attributes.get(OUTPUT_VALUE))
        return Facts(
            convention,
            "generation",
            question=v.indexed_messages(span, LLM_INPUT_MESSAGES, "user"),
            answer=answer,
            model=v.text(attributes.get(LLM_MODEL_NAME)),
            generation=parameters if isinstance(parameters, dict) else {},
        )
    role: Role = "request" if span.parent_span_id is None else "other"
    return Facts(
        convention,
        role,
        question=_value(span, INPUT_VALUE, INPUT_MIME, v.QUESTION_KEYS),
        answer=_value(span, OUTPUT_VALUE, OUTPUT_MIME, v.ANSWER_KEYS),
    )


def read(span: IngestSpan) -> Facts | None:
    kind = str(span.attributes.get(KIND, "")).upper()
    if not kind:
        return None
    return read_kind(span, kind, "openinference")
