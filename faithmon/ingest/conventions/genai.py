"""OpenTelemetry GenAI semantic conventions: retrieval and inference spans.

Retrieval documents (``gen_ai.retrieval.documents``) come as a JSON string or
as a structured value; the convention requires only ``id`` and ``score``, so the
text is read from an extra key (``content``, ``text`` or ``page_content``).
"""

from __future__ import annotations

from ..spans import IngestSpan
from . import values as v
from .facts import Facts

OPERATION = "gen_ai.operation.name"
QUERY_TEXT = "gen_ai.retrieval.query.text"
DOCUMENTS = "gen_ai.retrieval.documents"
INPUT_MESSAGES = "gen_ai.input.messages"
OUTPUT_MESSAGES = "gen_ai.output.messages"
REQUEST_MODEL = "gen_ai.request.model"
RESPONSE_MODEL = "gen_ai.response.model"
REQUEST_PREFIX = "gen_ai.request."
INFERENCE = ("chat", "text_completion", "generate_content")
# Older instrumentations name the provider but not the operation; their content
# arrives as log events, which the joiner reads.
PROVIDER_KEYS = ("gen_ai.provider.name", "gen_ai.system")


def read(span: IngestSpan) -> Facts | None:
    attributes = span.attributes
    operation = attributes.get(OPERATION)
    if operation == "retrieval" or DOCUMENTS in attributes:
        documents, unreadable = v.json_documents(attributes.get(DOCUMENTS, "[]"))
        return Facts(
            "genai",
            "retrieval",
            question=v.text(attributes.get(QUERY_TEXT)),
            documents=documents,
            problem=v.evidence_problem(span, documents, unreadable),
        )
    inference = operation in INFERENCE or OUTPUT_MESSAGES in attributes
    if inference or (operation is None and any(k in attributes for k in PROVIDER_KEYS)):
        settings = {
            key[len(REQUEST_PREFIX) :]: value
            for key, value in attributes.items()
            if key.startswith(REQUEST_PREFIX) and key != REQUEST_MODEL
        }
        return Facts(
            "genai",
            "generation",
            question=v.messages_text(attributes.get(INPUT_MESSAGES), "user"),
            answer=v.messages_text(attributes.get(OUTPUT_MESSAGES), "assistant"),
            model=v.text(attributes.get(RESPONSE_MODEL)) or v.text(attributes.get(REQUEST_MODEL)),
            generation=settings,
        )
    if operation is not None:
        return Facts("genai", "other")
    return None
