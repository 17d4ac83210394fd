"""The shim: rag_span and its spans, chunk shapes, failure handling, setup and export.

These tests import only OpenTelemetry and faithmon_instrumentation, never faithmon.
"""

from __future__ import annotations

import gzip
import http.server
import logging
import os
import threading
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field

import pytest
from opentelemetry import trace
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode

import faithmon_instrumentation as fm
from faithmon_instrumentation import _log
from faithmon_instrumentation import attributes as attr


@pytest.fixture(autouse=True)
def clean_environ(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests never see the developer's OTEL_* settings."""
    for name in list(os.environ):
        if name.startswith("OTEL_"):
            monkeypatch.delenv(name)


@pytest.fixture(autouse=True)
def released_provider() -> Iterator[None]:
    """Every test starts and ends without a shim provider, and with nothing logged yet."""
    fm.shutdown()
    _log.reset()
    yield
    fm.shutdown()


@pytest.fixture
def span_exporter() -> Iterator[InMemorySpanExporter]:
    """An in-memory exporter fed by a shim set up without OTLP export."""
    exporter = InMemorySpanExporter()
    fm.setup(service_name="support-bot", processors=[SimpleSpanProcessor(exporter)], export=False)
    yield exporter
    fm.shutdown()


def by_name(exporter: InMemorySpanExporter) -> dict[str, ReadableSpan]:
    return {span.name: span for span in exporter.get_finished_spans()}


def doc(index: int, name: str) -> str:
    return attr.document_key(index, name)


def test_request_retrieval_and_generation_spans(span_exporter: InMemorySpanExporter) -> None:
    """One request yields a CHAIN root with RETRIEVER and LLM children in one trace."""
    with fm.rag_span("Where is order A17?", route="billing", tenant="acme") as rag:
        rag.record_retrieval(["Order A17 shipped."], retriever="pgvector", retriever_version="v3")
        rag.record_answer("It shipped.", model="gpt-4o-mini")

    spans = by_name(span_exporter)
    assert set(spans) == {attr.SPAN_REQUEST, attr.SPAN_RETRIEVAL, attr.SPAN_GENERATION}
    request = spans[attr.SPAN_REQUEST]
    retrieval = spans[attr.SPAN_RETRIEVAL]
    generation = spans[attr.SPAN_GENERATION]
    assert request.parent is None
    for child in (retrieval, generation):
        assert child.parent is not None
        assert child.parent.span_id == request.context.span_id
        assert child.context.trace_id == request.context.trace_id
    assert request.resource.attributes[attr.SERVICE_NAME] == "support-bot"


def test_request_span_attributes(span_exporter: InMemorySpanExporter) -> None:
    """The request span carries the question, the answer, its role and the labels."""
    with fm.rag_span("Where is order A17?", route="billing", tenant="acme", shard=3) as rag:
        rag.set_label("prompt_version", "p7")
        rag.record_answer("It shipped.", model="gpt-4o-mini")

    attributes = by_name(span_exporter)[attr.SPAN_REQUEST].attributes
    assert attributes[attr.OI_SPAN_KIND] == attr.OI_KIND_CHAIN
    assert attributes[attr.FAITHMON_ROLE] == attr.ROLE_REQUEST
    assert attributes[attr.INPUT_VALUE] == "Where is order A17?"
    assert attributes[attr.OUTPUT_VALUE] == "It shipped."
    assert attributes["faithmon.label.route"] == "billing"
    assert attributes["faithmon.label.tenant"] == "acme"
    assert attributes["faithmon.label.shard"] == 3
    assert attributes["faithmon.label.prompt_version"] == "p7"


def test_labels_skip_none_and_stringify_other_types(span_exporter: InMemorySpanExporter) -> None:
    """A None label is left out and a non-primitive label is sent as its string."""
    with fm.rag_span("q", tenant=None, region=("eu", "west")):
        pass

    attributes = by_name(span_exporter)[attr.SPAN_REQUEST].attributes
    assert "faithmon.label.tenant" not in attributes
    assert attributes["faithmon.label.region"] == "('eu', 'west')"


def test_retrieval_span_attributes(span_exporter: InMemorySpanExporter) -> None:
    """The retrieval span has OpenInference documents, retriever name, version and count."""
    with fm.rag_span("Where is order A17?") as rag:
        rag.record_retrieval(["first", "second"], retriever="pgvector", retriever_version="v3")

    attributes = by_name(span_exporter)[attr.SPAN_RETRIEVAL].attributes
    assert attributes[attr.OI_SPAN_KIND] == attr.OI_KIND_RETRIEVER
    assert attributes[attr.FAITHMON_ROLE] == attr.ROLE_RETRIEVAL
    assert attributes[attr.INPUT_VALUE] == "Where is order A17?"
    assert attributes[attr.GEN_AI_RETRIEVAL_QUERY_TEXT] == "Where is order A17?"
    assert attributes[attr.GEN_AI_OPERATION_NAME] == "retrieval"
    assert attributes[attr.RETRIEVER_NAME] == "pgvector"
    assert attributes[attr.RETRIEVER_VERSION] == "v3"
    assert attributes[attr.DOCUMENT_COUNT] == 2
    assert attributes["retrieval.documents.0.document.content"] == "first"
    assert attributes["retrieval.documents.1.document.content"] == "second"


def test_generation_span_attributes(span_exporter: InMemorySpanExporter) -> None:
    """The generation span has the answer as an output message and the model name."""
    with fm.rag_span("q") as rag:
        rag.record_answer("It shipped.", model="gpt-4o-mini")

    attributes = by_name(span_exporter)[attr.SPAN_GENERATION].attributes
    assert attributes[attr.OI_SPAN_KIND] == attr.OI_KIND_LLM
    assert attributes[attr.FAITHMON_ROLE] == attr.ROLE_GENERATION
    assert attributes[attr.LLM_MODEL_NAME] == "gpt-4o-mini"
    assert attributes[attr.GEN_AI_REQUEST_MODEL] == "gpt-4o-mini"
    assert attributes["llm.output_messages.0.message.role"] == "assistant"
    assert attributes["llm.output_messages.0.message.content"] == "It shipped."
    assert attributes[attr.OUTPUT_VALUE] == "It shipped."


def test_chunks_keep_their_order(span_exporter: InMemorySpanExporter) -> None:
    """Chunk i of the call is document i of the span."""
    texts = [f"chunk number {i}" for i in (7, 2, 9, 0, 5)]
    with fm.rag_span("q") as rag:
        rag.record_retrieval(texts)

    attributes = by_name(span_exporter)[attr.SPAN_RETRIEVAL].attributes
    assert [attributes[doc(i, attr.DOCUMENT_CONTENT)] for i in range(len(texts))] == texts
    assert doc(len(texts), attr.DOCUMENT_CONTENT) not in attributes


def test_chunks_as_strings_mappings_and_chunk_objects(span_exporter: InMemorySpanExporter) -> None:
    """Strings, mappings with id/score/metadata, and Chunk objects all become documents."""
    with fm.rag_span("q") as rag:
        rag.record_retrieval(
            [
                "plain text",
                {"text": "from a mapping", "id": 42, "score": "0.75", "metadata": {"src": "kb"}},
                {"page_content": "langchain-style mapping"},
                fm.Chunk("from a Chunk", id="c-3", score=0.5, metadata={"page": 2}),
            ]
        )

    attributes = by_name(span_exporter)[attr.SPAN_RETRIEVAL].attributes
    assert attributes[doc(0, attr.DOCUMENT_CONTENT)] == "plain text"
    assert doc(0, attr.DOCUMENT_ID) not in attributes
    assert doc(0, attr.DOCUMENT_SCORE) not in attributes
    assert doc(0, attr.DOCUMENT_METADATA) not in attributes
    assert attributes[doc(1, attr.DOCUMENT_CONTENT)] == "from a mapping"
    assert attributes[doc(1, attr.DOCUMENT_ID)] == "42"
    assert attributes[doc(1, attr.DOCUMENT_SCORE)] == 0.75
    assert attributes[doc(1, attr.DOCUMENT_METADATA)] == '{"src": "kb"}'
    assert attributes[doc(2, attr.DOCUMENT_CONTENT)] == "langchain-style mapping"
    assert attributes[doc(3, attr.DOCUMENT_CONTENT)] == "from a Chunk"
    assert attributes[doc(3, attr.DOCUMENT_ID)] == "c-3"
    assert attributes[doc(3, attr.DOCUMENT_SCORE)] == 0.5
    assert attributes[doc(3, attr.DOCUMENT_METADATA)] == '{"page": 2}'
    assert attributes[attr.DOCUMENT_COUNT] == 4


def test_document_objects_with_page_content(span_exporter: InMemorySpanExporter) -> None:
    """An object with page_content and metadata (a LangChain Document) is read as a chunk."""

    @dataclass
    class Document:
        page_content: str
        metadata: dict[str, object] = field(default_factory=dict)

    with fm.rag_span("q") as rag:
        rag.record_retrieval([Document("document text", {"source": "faq.md"})])

    attributes = by_name(span_exporter)[attr.SPAN_RETRIEVAL].attributes
    assert attributes[doc(0, attr.DOCUMENT_CONTENT)] == "document text"
    assert attributes[doc(0, attr.DOCUMENT_METADATA)] == '{"source": "faq.md"}'


@pytest.mark.parametrize("bad", [[1], [{"id": "no text"}], None])
def test_bad_chunks_are_logged_not_raised(
    span_exporter: InMemorySpanExporter, caplog: pytest.LogCaptureFixture, bad: object
) -> None:
    """Chunks the shim cannot read are logged and the request still completes."""
    with (
        caplog.at_level(logging.WARNING, logger="faithmon_instrumentation"),
        fm.rag_span("q") as rag,
    ):
        rag.record_retrieval(bad)  # type: ignore[arg-type]
        rag.record_answer("a", model="m")

    assert "record_retrieval failed" in caplog.text
    spans = by_name(span_exporter)
    assert attr.SPAN_RETRIEVAL not in spans
    assert spans[attr.SPAN_REQUEST].status.status_code != StatusCode.ERROR
    assert spans[attr.SPAN_REQUEST].attributes[attr.OUTPUT_VALUE] == "a"


def test_app_exception_propagates_and_marks_the_request(
    span_exporter: InMemorySpanExporter,
) -> None:
    """The app's exception leaves the block unchanged and the request span ends with ERROR."""
    error = LookupError("index unavailable")
    with pytest.raises(LookupError) as raised, fm.rag_span("q") as rag:
        rag.record_answer("partial", model="m")
        raise error

    assert raised.value is error
    request = by_name(span_exporter)[attr.SPAN_REQUEST]
    assert request.end_time is not None
    assert request.status.status_code == StatusCode.ERROR
    assert request.status.description == "LookupError"
    assert [event.name for event in request.events] == ["exception"]


def test_large_chunks_arrive_whole_despite_env_limits(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Fifty 4 KB chunks keep their full text even with OTEL_* attribute limits set."""
    monkeypatch.setenv("OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT", "100")
    monkeypatch.setenv("OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT", "128")
    monkeypatch.setenv("OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT", "100")
    exporter = InMemorySpanExporter()
    fm.setup(processors=[SimpleSpanProcessor(exporter)], export=False)
    texts = [f"chunk {i:02d} " + chr(ord("a") + i % 26) * (4096 - 9) for i in range(50)]
    chunks = [{"text": t, "id": f"d{i}", "score": i / 50} for i, t in enumerate(texts)]

    with fm.rag_span("q") as rag:
        rag.record_retrieval(chunks, retriever="r", retriever_version="v1")

    retrieval = by_name(exporter)[attr.SPAN_RETRIEVAL]
    assert all(len(t) == 4096 for t in texts)
    assert [retrieval.attributes[doc(i, attr.DOCUMENT_CONTENT)] for i in range(50)] == texts
    assert retrieval.attributes[attr.DOCUMENT_COUNT] == 50
    assert retrieval.attributes[attr.OI_SPAN_KIND] == attr.OI_KIND_RETRIEVER
    assert retrieval.dropped_attributes == 0


def test_second_setup_warns_and_keeps_the_first_provider(
    span_exporter: InMemorySpanExporter, caplog: pytest.LogCaptureFixture
) -> None:
    """A second setup() logs a warning and spans keep going to the first provider."""
    second = InMemorySpanExporter()
    with caplog.at_level(logging.WARNING, logger="faithmon_instrumentation"):
        fm.setup(service_name="other", processors=[SimpleSpanProcessor(second)], export=False)

    assert "already called" in caplog.text
    with fm.rag_span("q"):
        pass
    assert [s.name for s in span_exporter.get_finished_spans()] == [attr.SPAN_REQUEST]
    assert second.get_finished_spans() == ()


def test_without_setup_rag_span_uses_the_global_noop_provider() -> None:
    """Without setup() the shim uses the global (no-op) provider and never raises."""
    assert isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider)

    with fm.rag_span("q", route="billing") as rag:
        rag.set_label("tenant", "acme")
        rag.record_retrieval(["chunk"], retriever="r")
        rag.record_answer("a", model="m")

    assert not rag.span.is_recording()
    assert fm.flush() is True


@dataclass
class OtlpRequests:
    """What the fake collector received, decoded."""

    paths: list[str] = field(default_factory=list)
    content_types: list[str] = field(default_factory=list)
    requests: list[ExportTraceServiceRequest] = field(default_factory=list)

    def spans(self) -> list[tuple[str, dict[str, object]]]:
        out = []
        for request in self.requests:
            for resource_spans in request.resource_spans:
                for scope_spans in resource_spans.scope_spans:
                    for span in scope_spans.spans:
                        values = {kv.key: kv.value for kv in span.attributes}
                        out.append((span.name, values))
        return out


@pytest.fixture
def otlp_collector() -> Iterator[tuple[str, OtlpRequests]]:
    """A stdlib HTTP server on 127.0.0.1 that decodes OTLP/HTTP protobuf trace exports."""
    received = OtlpRequests()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers["Content-Length"]))
            encoding = self.headers.get("Content-Encoding", "")
            if encoding == "gzip":
                body = gzip.decompress(body)
            elif encoding == "deflate":
                body = zlib.decompress(body)
            received.paths.append(self.path)
            received.content_types.append(self.headers.get("Content-Type", ""))
            received.requests.append(ExportTraceServiceRequest.FromString(body))
            reply = ExportTraceServiceResponse().SerializeToString()
            self.send_response(200)
            self.send_header("Content-Type", "application/x-protobuf")
            self.send_header("Content-Length", str(len(reply)))
            self.end_headers()
            self.wfile.write(reply)

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", received
    finally:
        fm.shutdown()
        server.shutdown()
        server.server_close()
        thread.join()


def test_otlp_http_export_reaches_a_collector(otlp_collector: tuple[str, OtlpRequests]) -> None:
    """setup(endpoint=...) exports the three spans as OTLP/HTTP protobuf to /v1/traces."""
    endpoint, received = otlp_collector
    fm.setup(endpoint=endpoint, service_name="support-bot")

    with fm.rag_span("Where is order A17?", route="billing") as rag:
        rag.record_retrieval(["Order A17 shipped."], retriever="pgvector")
        rag.record_answer("It shipped.", model="gpt-4o-mini")

    assert fm.flush() is True
    assert received.paths and set(received.paths) == {"/v1/traces"}
    assert set(received.content_types) == {"application/x-protobuf"}
    spans = dict(received.spans())
    assert set(spans) == {attr.SPAN_REQUEST, attr.SPAN_RETRIEVAL, attr.SPAN_GENERATION}
    assert spans[attr.SPAN_REQUEST][attr.INPUT_VALUE].string_value == "Where is order A17?"
    retrieval = spans[attr.SPAN_RETRIEVAL]
    assert retrieval[doc(0, attr.DOCUMENT_CONTENT)].string_value == "Order A17 shipped."
    assert retrieval[attr.DOCUMENT_COUNT].int_value == 1
    resource = {
        kv.key: kv.value.string_value
        for request in received.requests
        for resource_spans in request.resource_spans
        for kv in resource_spans.resource.attributes
    }
    assert resource[attr.SERVICE_NAME] == "support-bot"
