"""Span attribute names written by the shim and read by faithmon's ingest.

Constants, plus the one checksum both sides must compute alike; stdlib only, so
the backend can import it without pulling OpenTelemetry's SDK into every part.

Conventions: OpenInference names where OpenInference defines them, OpenTelemetry
GenAI names where they apply, and ``faithmon.*`` for what neither defines.
"""

from collections.abc import Sequence
from zlib import crc32

# OpenInference
OI_SPAN_KIND = "openinference.span.kind"
OI_KIND_CHAIN = "CHAIN"
OI_KIND_RETRIEVER = "RETRIEVER"
OI_KIND_RERANKER = "RERANKER"
OI_KIND_LLM = "LLM"
INPUT_VALUE = "input.value"
OUTPUT_VALUE = "output.value"
RETRIEVAL_DOCUMENTS = "retrieval.documents"
RERANKER_INPUT_DOCUMENTS = "reranker.input_documents"
RERANKER_OUTPUT_DOCUMENTS = "reranker.output_documents"
RERANKER_MODEL_NAME = "reranker.model_name"
RERANKER_QUERY = "reranker.query"
DOCUMENT_ID = "document.id"
DOCUMENT_CONTENT = "document.content"
DOCUMENT_SCORE = "document.score"
DOCUMENT_METADATA = "document.metadata"
LLM_MODEL_NAME = "llm.model_name"
LLM_INVOCATION_PARAMETERS = "llm.invocation_parameters"
LLM_PROMPT_TEMPLATE_VERSION = "llm.prompt_template.version"
LLM_OUTPUT_MESSAGES = "llm.output_messages"
MESSAGE_ROLE = "message.role"
MESSAGE_CONTENT = "message.content"

# OpenTelemetry GenAI semantic conventions
GEN_AI_OPERATION_NAME = "gen_ai.operation.name"
GEN_AI_REQUEST_MODEL = "gen_ai.request.model"
GEN_AI_RETRIEVAL_QUERY_TEXT = "gen_ai.retrieval.query.text"
# JSON list of {"id", "score", "content", "metadata"}; used when the flattened
# OpenInference keys would not fit the provider's attribute budget.
GEN_AI_RETRIEVAL_DOCUMENTS = "gen_ai.retrieval.documents"
GEN_AI_REQUEST_PREFIX = "gen_ai.request."

# Resource
SERVICE_NAME = "service.name"

# faithmon's own names
FAITHMON_ROLE = "faithmon.role"
ROLE_REQUEST = "request"
ROLE_RETRIEVAL = "retrieval"
ROLE_GENERATION = "generation"
ROLE_RERANK = "rerank"
ROLE_CONTEXT = "context"
ROLE_FEEDBACK = "feedback"
LABEL_PREFIX = "faithmon.label."
RETRIEVER_NAME = "faithmon.retriever.name"
RETRIEVER_VERSION = "faithmon.retriever.version"
RERANKER_NAME = "faithmon.reranker.name"
RERANKER_VERSION = "faithmon.reranker.version"
DOCUMENT_COUNT = "faithmon.retrieval.document_count"
# "len:crc32,len:crc32,..." over the chunk texts, set after them: the backend
# recomputes it to tell a chunk that was cut or dropped on the way.
DOCUMENT_CHECKS = "faithmon.retrieval.document_checks"
# Set on the request span as it ends (it ends last): how many child spans of each
# kind the shim emitted and their chunks in all, so the backend can tell a
# trace whose retrieval span was lost in export from one that had no retrieval.
REQUEST_RETRIEVALS = "faithmon.request.retrievals"
REQUEST_RERANKS = "faithmon.request.reranks"
REQUEST_CONTEXTS = "faithmon.request.contexts"
REQUEST_CHUNKS = "faithmon.request.chunks"
KEEP = "faithmon.keep"
FEEDBACK_TRACE_ID = "faithmon.feedback.trace_id"
FEEDBACK_VALUE = "faithmon.feedback.value"
SHIM_VERSION = "faithmon.instrumentation.version"

# Span names
SPAN_REQUEST = "rag.request"
SPAN_RETRIEVAL = "rag.retrieve"
SPAN_GENERATION = "rag.generate"
SPAN_RERANK = "rag.rerank"
SPAN_CONTEXT = "rag.context"
SPAN_FEEDBACK = "rag.feedback"


def document_key(index: int, field: str, prefix: str = RETRIEVAL_DOCUMENTS) -> str:
    """Flattened OpenInference key, e.g. ``retrieval.documents.3.document.content``."""
    return f"{prefix}.{index}.{field}"


def document_checks(texts: Sequence[str]) -> str:
    """The value of DOCUMENT_CHECKS for these chunk texts."""
    return ",".join(f"{len(text)}:{crc32(text.encode('utf-8')):08x}" for text in texts)
