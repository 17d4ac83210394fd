"""Shared ingest-test helpers: OTLP/HTTP exports (a RAG trace's body, a post), and the spool
tests' spans, trace ids and idempotent store."""

from __future__ import annotations

from collections.abc import Sequence

from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from faithmon.errors import StoreUnavailable
from faithmon.ingest.spans import IngestSpan
from faithmon.model import RagRecord
from tests.api.client import send

PROTOBUF = "application/x-protobuf"


def rag_body(question: str = "Where is order A17?") -> bytes:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("test")
    with tracer.start_as_current_span("rag.request") as root:
        root.set_attribute("openinference.span.kind", "CHAIN")
        root.set_attribute("input.value", question)
        root.set_attribute("output.value", "It shipped.")
        with tracer.start_as_current_span("retrieve") as retrieve:
            retrieve.set_attribute("openinference.span.kind", "RETRIEVER")
            retrieve.set_attribute("retrieval.documents.0.document.content", "Order A17 shipped.")
    body: bytes = encode_spans(exporter.get_finished_spans()).SerializeToString()
    return body


def post(url: str, body: bytes, headers: dict[str, str]) -> tuple[int, bytes, dict[str, str]]:
    """(status, body, headers) of an OTLP/HTTP export to ``url``'s /v1/traces."""
    status, answer, got = send(url + "/v1/traces", body, headers, timeout=10)
    return status, answer, dict(got)


def spans(trace_id: str, question: str = "Where is order A17?") -> list[IngestSpan]:
    """A root span with its question and answer, and a retrieval child with one chunk."""
    root = IngestSpan(
        trace_id,
        "b7ad6b7169203331",
        None,
        "rag.request",
        1_000,
        9_000,
        {"openinference.span.kind": "CHAIN", "input.value": question, "output.value": "Shipped."},
        {"service.name": "support-bot"},
    )
    child = IngestSpan(
        trace_id,
        "c7ad6b7169203331",
        "b7ad6b7169203331",
        "rag.retrieve",
        2_000,
        3_000,
        {
            "openinference.span.kind": "RETRIEVER",
            "retrieval.documents.0.document.content": "Order A17 shipped on Monday.",
            "retrieval.documents.0.document.score": 0.5,
        },
    )
    return [root, child]


def trace_id(n: int) -> str:
    return f"{n:032x}"


class Store:
    """Records by trace id (stored idempotently, as the real store does); ``down`` fails saves."""

    def __init__(self) -> None:
        self.records: dict[str, RagRecord] = {}
        self.saves = 0
        self.down = False

    def __call__(self, records: Sequence[RagRecord]) -> None:
        if self.down:
            raise StoreUnavailable("OperationalError")
        self.saves += 1
        for record in records:
            self.records.setdefault(record.trace_id, record)
