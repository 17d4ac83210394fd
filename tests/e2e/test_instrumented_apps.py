"""Apps instrumented by other libraries, unchanged, point their exporter at faithmon."""

from __future__ import annotations

import json
import signal
import subprocess
from collections.abc import Iterator

import pytest
from openai import OpenAI
from openinference.instrumentation.openai import OpenAIInstrumentor
from openinference.semconv.trace import DocumentAttributes as Doc
from openinference.semconv.trace import OpenInferenceSpanKindValues as Kind
from openinference.semconv.trace import SpanAttributes as OI
from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter as GrpcExporter
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter as HttpExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

from tests.e2e.helpers import faithmon
from tests.openai_server import ChatServer
from tests.servers import serve_in_thread

# The dialect is not the point here: PostgreSQL runs in the second_backend tier.
pytestmark = pytest.mark.one_backend

CHUNKS = [
    "Refunds reach the original payment method within 5 business days.",
    "Gift cards cannot be refunded.",
]
QUESTION = "How long do refunds take?"


@pytest.fixture
def chat_url() -> Iterator[str]:
    with serve_in_thread(ChatServer().app) as url:
        yield url + "/v1"


def stop(process: subprocess.Popen[str]) -> None:
    process.send_signal(signal.SIGTERM)
    process.communicate(timeout=60)


def test_openinference_openai_instrumentor(
    env: dict[str, str], server: tuple[str, subprocess.Popen[str]], chat_url: str
) -> None:
    """The openai client traced by openinference's instrumentor plus a retriever span."""
    url, process = server
    provider = TracerProvider(resource=Resource.create({"service.name": "oi-app"}))
    provider.add_span_processor(SimpleSpanProcessor(HttpExporter(url + "/v1/traces")))
    instrumentor = OpenAIInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    try:
        tracer = provider.get_tracer("app")
        client = OpenAI(base_url=chat_url, api_key="test-key")
        with tracer.start_as_current_span("POST /ask"):
            with tracer.start_as_current_span("retrieve") as span:
                span.set_attribute(OI.OPENINFERENCE_SPAN_KIND, Kind.RETRIEVER.value)
                span.set_attribute(OI.INPUT_VALUE, QUESTION)
                for i, text in enumerate(CHUNKS):
                    span.set_attribute(f"{OI.RETRIEVAL_DOCUMENTS}.{i}.{Doc.DOCUMENT_CONTENT}", text)
                    span.set_attribute(f"{OI.RETRIEVAL_DOCUMENTS}.{i}.{Doc.DOCUMENT_ID}", f"d{i}")
            context = "\n".join(f"[{i}] {c}" for i, c in enumerate(CHUNKS))
            client.chat.completions.create(
                model="local-model",
                temperature=0,
                messages=[{"role": "user", "content": f"{context}\nQuestion: {QUESTION}"}],
            )
        client.close()
    finally:
        instrumentor.uninstrument()
        provider.shutdown()
    stop(process)

    faithmon(env, "worker", "--once")
    [record] = json.loads(faithmon(env, "traces", "list", "--json"))
    assert record["question"] == QUESTION
    assert record["answer"] == CHUNKS[0]
    assert [c["id"] for c in record["chunks"]] == ["d0", "d1"]
    assert record["labels"]["model"] == "local-model"
    assert record["convention"] == "openinference"
    assert record["status"] == "scored" and record["faithfulness"] == 1.0


def test_otlp_grpc_exporter(
    env: dict[str, str], server: tuple[str, subprocess.Popen[str]], grpc_port: int
) -> None:
    """The SDK's OTLP/gRPC exporter reaches faithmon serve on its gRPC port."""
    _, process = server
    provider = TracerProvider(resource=Resource.create({"service.name": "grpc-app"}))
    exporter = GrpcExporter(endpoint=f"127.0.0.1:{grpc_port}", insecure=True)
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("app")
    with tracer.start_as_current_span("chain") as root:
        root.set_attributes(
            {
                OI.OPENINFERENCE_SPAN_KIND: Kind.CHAIN.value,
                OI.INPUT_VALUE: QUESTION,
                OI.OUTPUT_VALUE: CHUNKS[0],
            }
        )
        with tracer.start_as_current_span("retrieve") as span:
            span.set_attribute(OI.OPENINFERENCE_SPAN_KIND, Kind.RETRIEVER.value)
            span.set_attribute(f"{OI.RETRIEVAL_DOCUMENTS}.0.{Doc.DOCUMENT_CONTENT}", CHUNKS[0])
    provider.shutdown()
    stop(process)

    [record] = json.loads(faithmon(env, "traces", "list", "--json"))
    assert (record["question"], record["answer"]) == (QUESTION, CHUNKS[0])
    assert record["labels"]["service"] == "grpc-app"
    assert [c["text"] for c in record["chunks"]] == [CHUNKS[0]]
