"""faithmon_instrumentation: record RAG requests as OpenTelemetry spans.

Usage::

    import faithmon_instrumentation as fm

    fm.setup(endpoint="http://127.0.0.1:4318", service_name="support-bot")
    with fm.rag_span(question, route="billing", tenant="acme") as rag:
        rag.record_retrieval(chunks, retriever="pgvector", retriever_version="v3")
        rag.record_answer(answer, model="gpt-4o-mini")
    fm.flush()

Configuration: ``setup()`` arguments win; otherwise the standard ``OTEL_*``
variables apply (``OTEL_EXPORTER_OTLP_ENDPOINT``, ``OTEL_SERVICE_NAME``,
``OTEL_RESOURCE_ATTRIBUTES``, ``OTEL_BSP_*``). Without ``setup()`` the spans go
to the app's global TracerProvider.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING

from . import _setup
from ._chunks import Chunk
from ._decorators import generator, retriever
from ._feedback import record_feedback
from ._span import RagSpan, current, rag_span

if TYPE_CHECKING:
    # Types only: the SDK is set up in _setup and _export, the shim's two SDK rooms.
    from opentelemetry.sdk.trace import SpanProcessor, TracerProvider

__version__ = "0.1.0"
__all__ = [
    "Chunk",
    "RagSpan",
    "current",
    "flush",
    "generator",
    "rag_span",
    "record_feedback",
    "retriever",
    "setup",
    "shutdown",
]

logger = logging.getLogger(__name__)


def setup(
    endpoint: str | None = None,
    service_name: str | None = None,
    *,
    processors: Sequence[SpanProcessor] = (),
    export: bool = True,
    tracer_provider: TracerProvider | None = None,
    api_key: str | None = None,
) -> None:
    """Configure the shim's TracerProvider; a second call warns and does nothing.

    ``endpoint`` is the OTLP/HTTP base URL (``http://host:4318``) or the full
    traces URL. ``processors`` are added before the exporter (faithmon's demo
    passes its in-process pipeline); ``export=False`` sends nothing over OTLP.

    By default the shim records through a provider of its own, beside the app's,
    with no attribute limits. ``tracer_provider=`` records through the app's
    provider instead (one pipeline for all spans); the shim then adds an OTLP
    exporter only when ``endpoint`` is given, and keeps evidence whole within
    that provider's limits by packing chunks into one attribute when needed.

    ``api_key`` (else ``FAITHMON_API_KEY``) is the faithmon key with the ``ingest``
    scope that the exporter sends as ``Authorization: Bearer``.
    """
    try:
        _setup.configure(
            endpoint, service_name, processors, export, tracer_provider, api_key=api_key
        )
    except Exception:
        logger.exception("faithmon_instrumentation: setup failed; spans go to the global provider")


def flush(timeout_millis: int = 30_000) -> bool:
    """Send the queued spans now; True when everything was exported in time."""
    return _setup.flush(timeout_millis)


def shutdown() -> None:
    """Flush and release the provider (tests, or apps that re-run ``setup``)."""
    _setup.shutdown()
