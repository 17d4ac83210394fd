"""Span attribute names written by the shim and read by faithmon's ingest.

Constants only; this module imports nothing so that the backend can depend on
it without pulling OpenTelemetry's SDK into every part.

Conventions: OpenInference names where OpenInference defines them, OpenTelemetry
GenAI names where they apply, and ``faithmon.*`` for what neither defines.
"""

# OpenInference
OI_SPAN_KIND = "openinference.span.kind"
OI_KIND_CHAIN = "CHAIN"
OI_KIND_RETRIEVER = "RETRIEVER"
OI_KIND_RERANKER = "RERANKER"
OI_KIND_LLM = "LLM"
INPUT_VALUE = "input.value"
OUTPUT_VALUE = "output.value"
RETRIEVAL_DOCUMENTS = "retrieval.documents"
DOCUMENT_ID = "document.id"
DOCUMENT_CONTENT = "document.content"
DOCUMENT_SCORE = "document.score"
DOCUMENT_METADATA = "document.metadata"
LLM_MODEL_NAME = "llm.model_name"
LLM_OUTPUT_MESSAGES = "llm.output_messages"
MESSAGE_ROLE = "message.role"
MESSAGE_CONTENT = "message.content"

# OpenTelemetry GenAI semantic conventions
GEN_AI_OPERATION_NAME = "gen_ai.operation.name"
GEN_AI_REQUEST_MODEL = "gen_ai.request.model"
GEN_AI_RETRIEVAL_QUERY_TEXT = "gen_ai.retrieval.query.text"

# Resource
SERVICE_NAME = "service.name"

# faithmon's own names
FAITHMON_ROLE = "faithmon.role"
ROLE_REQUEST = "request"
ROLE_RETRIEVAL = "retrieval"
ROLE_GENERATION = "generation"
LABEL_PREFIX = "faithmon.label."
RETRIEVER_NAME = "faithmon.retriever.name"
RETRIEVER_VERSION = "faithmon.retriever.version"
DOCUMENT_COUNT = "faithmon.retrieval.document_count"
SHIM_VERSION = "faithmon.instrumentation.version"

# Span names
SPAN_REQUEST = "rag.request"
SPAN_RETRIEVAL = "rag.retrieve"
SPAN_GENERATION = "rag.generate"


def document_key(index: int, field: str, prefix: str = RETRIEVAL_DOCUMENTS) -> str:
    """Flattened OpenInference key, e.g. ``retrieval.documents.3.document.content``."""
    return f"{prefix}.{index}.{field}"
