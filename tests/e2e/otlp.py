"""Shared end-to-end helpers for the receiver's processes: OTLP bodies of RAG traces built
by the real SDK, and a post of one to a receiver."""

from __future__ import annotations

import http.client
import threading
from urllib.parse import urlsplit

from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

ANSWER = "Order A17 shipped on 3 March."


class Traces:
    """OTLP protobuf bodies of one OpenInference RAG trace each, built by the real SDK."""

    def __init__(self) -> None:
        self._memory = InMemorySpanExporter()
        self._provider = TracerProvider(resource=Resource({"service.name": "durability"}))
        self._provider.add_span_processor(SimpleSpanProcessor(self._memory))
        self._tracer = self._provider.get_tracer("durability")
        self._lock = threading.Lock()

    def body(self, n: int, question: str = "") -> tuple[str, bytes]:
        with self._lock:
            self._memory.clear()
            root_attributes = {
                "openinference.span.kind": "CHAIN",
                "input.value": question or f"Where is order A{n}?",
                "output.value": ANSWER,
            }
            with self._tracer.start_as_current_span("rag.request", attributes=root_attributes) as r:
                retrieval = {
                    "openinference.span.kind": "RETRIEVER",
                    "retrieval.documents.0.document.content": ANSWER,
                }
                with self._tracer.start_as_current_span("rag.retrieve", attributes=retrieval):
                    pass
            trace_id = format(r.get_span_context().trace_id, "032x")
            return trace_id, encode_spans(self._memory.get_finished_spans()).SerializeToString()


def post(url: str, body: bytes) -> int:
    parts = urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=10)
    try:
        connection.request("POST", "/v1/traces", body, {"Content-Type": "application/x-protobuf"})
        return connection.getresponse().status
    finally:
        connection.close()
