"""OpenLLMetry (Traceloop): workflow/task entities, LLM prompts and completions, and
vector-database result events.

Two generations of LLM content: flattened ``gen_ai.prompt.{i}.content`` /
``gen_ai.completion.{i}.content`` (older releases) and the JSON strings
``gen_ai.input.messages`` / ``gen_ai.output.messages`` (2026 releases).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from ...model import Chunk
from ..spans import IngestSpan
from . import values as v
from .facts import Facts, Role

SPAN_KIND = "traceloop.span.kind"
ENTITY_INPUT = "traceloop.entity.input"
ENTITY_OUTPUT = "traceloop.entity.output"
PROMPTS = "gen_ai.prompt"
COMPLETIONS = "gen_ai.completion"
INPUT_MESSAGES = "gen_ai.input.messages"
OUTPUT_MESSAGES = "gen_ai.output.messages"
OPERATION = "gen_ai.operation.name"
RESULT_EVENTS = ("db.query.result", "db.search.result")
REQUEST_MODEL = "gen_ai.request.model"
RESPONSE_MODEL = "gen_ai.response.model"


def _recognises(span: IngestSpan) -> bool:
    if any(e.name in RESULT_EVENTS for e in span.events):
        return True
    if span.attributes.get(OPERATION) == "vector_db_retrieve":
        return True
    return any(
        key.startswith(("traceloop.", PROMPTS + ".", COMPLETIONS + ".")) for key in span.attributes
    )


def _event_chunks(span: IngestSpan) -> tuple[tuple[Chunk, ...] | None, str | None]:
    docs: list[dict[str, Any]] = []
    distances: dict[int, Any] = {}
    for event in span.events:
        if event.name not in RESULT_EVENTS:
            continue
        prefix = event.name + "."
        attributes = {
            k[len(prefix) :]: val for k, val in event.attributes.items() if k.startswith(prefix)
        }
        if "distance" in attributes:
            distances[len(docs)] = attributes["distance"]
        # Metadata goes as it came: v.chunks parses it and names any problem with it.
        docs.append(
            {
                "id": attributes.get("id"),
                "content": attributes.get("document", attributes.get("entity")),
                "score": attributes.get("score"),
                "metadata": attributes.get("metadata"),
            }
        )
    if not docs:
        return None, None
    found, problem = v.chunks(docs)
    return tuple(
        replace(c, metadata={**c.metadata, "distance": distances[c.position]})
        if c.position in distances
        else c
        for c in found
    ), problem


def read(span: IngestSpan) -> Facts | None:
    if not _recognises(span):
        return None
    attributes = span.attributes
    entity_input = v.loads(attributes.get(ENTITY_INPUT))
    entity_output = attributes.get(ENTITY_OUTPUT)
    question = v.pick(entity_input, v.QUESTION_KEYS)
    documents, unreadable = _event_chunks(span)
    output_document = v.loads(entity_output)
    lists_documents = isinstance(output_document, dict) and "documents" in output_document
    if documents is not None and span.dropped_events:
        unreadable = f"span {span.name!r} dropped {span.dropped_events} events"
    elif documents is None and (
        lists_documents or attributes.get(OPERATION) == "vector_db_retrieve"
    ):
        documents, unreadable = v.json_documents(entity_output)
    if documents is not None:
        problem = v.evidence_problem(span, documents, unreadable)
        return Facts(
            "openllmetry", "retrieval", question=question, documents=documents, problem=problem
        )

    answer = v.indexed_messages(span, COMPLETIONS, "assistant") or v.messages_text(
        attributes.get(OUTPUT_MESSAGES), "assistant"
    )
    model = v.text(attributes.get(RESPONSE_MODEL)) or v.text(attributes.get(REQUEST_MODEL))
    if answer is not None:
        prompt = v.indexed_messages(span, PROMPTS, "user") or v.messages_text(
            attributes.get(INPUT_MESSAGES), "user"
        )
        return Facts("openllmetry", "generation", question=prompt, answer=answer, model=model)
    role: Role = (
        "request"
        if span.parent_span_id is None or attributes.get(SPAN_KIND) == "workflow"
        else "other"
    )
    return Facts(
        "openllmetry",
        role,
        question=question,
        answer=v.pick(output_document, v.ANSWER_KEYS),
        model=model,
    )
