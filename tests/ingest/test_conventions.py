"""Every supported convention round-trips through the receiver, as protobuf and as JSON.

Fixture traces are written with the OpenTelemetry SDK and the conventions' own
constant packages, encoded by the SDK's OTLP encoder, posted to a real receiver
on loopback, assembled and extracted.
"""

from __future__ import annotations

import base64
import json
import urllib.request
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import pytest
from google.protobuf import json_format
from google.protobuf.message import Message
from openinference.semconv.trace import DocumentAttributes as Doc
from openinference.semconv.trace import MessageAttributes as Msg
from openinference.semconv.trace import OpenInferenceMimeTypeValues as Mime
from openinference.semconv.trace import OpenInferenceSpanKindValues as Kind
from openinference.semconv.trace import RerankerAttributes as Rerank
from openinference.semconv.trace import SpanAttributes as OI
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue, KeyValueList
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import Tracer, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.semconv_ai import EventAttributes, Events
from opentelemetry.semconv_ai import SpanAttributes as TL

from faithmon.api.app import create_app
from faithmon.ingest.pipeline import Pipeline
from faithmon.ingest.sampler import KeepAll
from faithmon.ingest.scrub import identity
from faithmon.model import RagRecord
from tests.servers import serve_in_thread

PROTOBUF = "application/x-protobuf"
JSON = "application/json"
QUESTION = "How long do refunds take?"
ANSWER = "Refunds take 5 business days."
DOCS = [
    ("kb-1", "Refunds take 5 business days.", 0.91),
    ("kb-2", "Returns are free within 30 days.", 0.55),
    ("kb-3", "Gift cards cannot be refunded.", 0.12),
]


class Receiver:
    """A receiver on loopback whose records land in a list."""

    def __init__(self, url: str, pipeline: Pipeline, records: list[RagRecord]) -> None:
        self.url, self.pipeline, self.records = url, pipeline, records

    def post(self, path: str, message: Message, content_type: str) -> int:
        body = message.SerializeToString() if content_type == PROTOBUF else otlp_json(message)
        request = urllib.request.Request(
            self.url + path, data=body, headers={"Content-Type": content_type}
        )
        with urllib.request.urlopen(request, timeout=10) as response:
            assert response.headers["Content-Type"] == content_type
            return int(response.status)

    def record(self) -> RagRecord:
        self.pipeline.flush_all()
        [record] = self.records
        return record


def otlp_json(message: Message) -> bytes:
    """OTLP JSON: protobuf's JSON mapping, but with ids in hex, not base64."""
    document = json_format.MessageToDict(message)

    def hexify(node: Any) -> None:
        if isinstance(node, list):
            for item in node:
                hexify(item)
        elif isinstance(node, dict):
            for key, value in node.items():
                if key in ("traceId", "spanId", "parentSpanId") and isinstance(value, str):
                    node[key] = base64.b64decode(value).hex()
                else:
                    hexify(value)

    hexify(document)
    return json.dumps(document).encode()


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    records: list[RagRecord] = []
    pipeline = Pipeline(records.extend, sampler=KeepAll(), scrubber=identity, quiet_seconds=0)
    with serve_in_thread(create_app(pipeline)) as url:
        yield Receiver(url, pipeline, records)


@pytest.fixture(params=[PROTOBUF, JSON], ids=["protobuf", "json"])
def encoding(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def produce(write: Callable[[Tracer], None]) -> Message:
    exporter = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource.create({"service.name": "rag-app"}))
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    write(provider.get_tracer("fixture"))
    provider.shutdown()
    message: Message = encode_spans(exporter.get_finished_spans())
    return message


def oi_documents(
    prefix: str, docs: Sequence[tuple[str | None, str, float | None]]
) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for i, (doc_id, content, score) in enumerate(docs):
        out[f"{prefix}.{i}.{Doc.DOCUMENT_CONTENT}"] = content
        out[f"{prefix}.{i}.{Doc.DOCUMENT_METADATA}"] = json.dumps({"source": "faq"})
        if doc_id is not None:
            out[f"{prefix}.{i}.{Doc.DOCUMENT_ID}"] = doc_id
        if score is not None:
            out[f"{prefix}.{i}.{Doc.DOCUMENT_SCORE}"] = score
    return out


def llamaindex(tracer: Tracer) -> None:
    with tracer.start_as_current_span("query") as root:
        root.set_attributes(
            {
                OI.OPENINFERENCE_SPAN_KIND: Kind.CHAIN.value,
                OI.INPUT_VALUE: QUESTION,
                OI.OUTPUT_VALUE: ANSWER,
            }
        )
        with tracer.start_as_current_span("retrieve") as span:
            span.set_attributes(
                {
                    OI.OPENINFERENCE_SPAN_KIND: Kind.RETRIEVER.value,
                    OI.INPUT_VALUE: QUESTION,
                    **oi_documents(OI.RETRIEVAL_DOCUMENTS, DOCS),
                }
            )
        with tracer.start_as_current_span("rerank") as span:
            span.set_attributes(
                {
                    OI.OPENINFERENCE_SPAN_KIND: Kind.RERANKER.value,
                    Rerank.RERANKER_QUERY: QUESTION,
                    **oi_documents(Rerank.RERANKER_OUTPUT_DOCUMENTS, DOCS[:2]),
                }
            )
        with tracer.start_as_current_span("llm") as span:
            span.set_attributes(
                {
                    OI.OPENINFERENCE_SPAN_KIND: Kind.LLM.value,
                    OI.LLM_MODEL_NAME: "gpt-4o-mini",
                    OI.LLM_INVOCATION_PARAMETERS: json.dumps({"temperature": 0.1}),
                    f"{OI.LLM_OUTPUT_MESSAGES}.0.{Msg.MESSAGE_ROLE}": "assistant",
                    f"{OI.LLM_OUTPUT_MESSAGES}.0.{Msg.MESSAGE_CONTENT}": ANSWER,
                }
            )


def test_openinference_llamaindex(receiver: Receiver, encoding: str) -> None:
    """Ids, scores and the reranked list come through; the retrieved list is kept beside."""
    assert receiver.post("/v1/traces", produce(llamaindex), encoding) == 200
    record = receiver.record()
    assert (record.question, record.answer) == (QUESTION, ANSWER)
    assert [(c.id, c.text, c.score) for c in record.chunks] == DOCS[:2]
    assert [c.id for c in record.retrieved] == ["kb-1", "kb-2", "kb-3"]
    assert record.chunks[0].metadata == {"source": "faq"}
    assert record.labels == {"service": "rag-app", "model": "gpt-4o-mini"}
    assert record.generation == {"temperature": 0.1}
    assert record.convention == "openinference" and record.incomplete is None


def langchain(tracer: Tracer) -> None:
    with tracer.start_as_current_span("RetrievalQA") as root:
        root.set_attributes(
            {
                OI.OPENINFERENCE_SPAN_KIND: Kind.CHAIN.value,
                OI.INPUT_VALUE: json.dumps({"input": QUESTION}),
                OI.INPUT_MIME_TYPE: Mime.JSON.value,
                OI.OUTPUT_VALUE: json.dumps({"output": ANSWER}),
                OI.OUTPUT_MIME_TYPE: Mime.JSON.value,
            }
        )
        with tracer.start_as_current_span("VectorStoreRetriever") as span:
            span.set_attributes(
                {
                    OI.OPENINFERENCE_SPAN_KIND: Kind.RETRIEVER.value,
                    OI.INPUT_VALUE: QUESTION,
                    **oi_documents(OI.RETRIEVAL_DOCUMENTS, [(None, t, None) for _, t, _ in DOCS]),
                }
            )
        with tracer.start_as_current_span("ChatOpenAI") as span:
            span.set_attributes(
                {
                    OI.OPENINFERENCE_SPAN_KIND: Kind.LLM.value,
                    OI.LLM_MODEL_NAME: "gpt-4o",
                    OI.OUTPUT_VALUE: ANSWER,
                }
            )


def test_openinference_langchain(receiver: Receiver, encoding: str) -> None:
    """JSON chain input and output are unwrapped; chunks have text and metadata only."""
    assert receiver.post("/v1/traces", produce(langchain), encoding) == 200
    record = receiver.record()
    assert (record.question, record.answer) == (QUESTION, ANSWER)
    assert [(c.id, c.text, c.score) for c in record.chunks] == [(None, t, None) for _, t, _ in DOCS]
    assert record.labels["model"] == "gpt-4o"


def openllmetry_legacy(tracer: Tracer) -> None:
    with tracer.start_as_current_span("rag.workflow") as root:
        root.set_attributes(
            {
                TL.TRACELOOP_SPAN_KIND: "workflow",
                TL.TRACELOOP_ENTITY_INPUT: json.dumps({"inputs": {"question": QUESTION}}),
                TL.TRACELOOP_ENTITY_OUTPUT: json.dumps({"outputs": {"answer": ANSWER}}),
            }
        )
        with tracer.start_as_current_span("vector_db_retrieve VectorStoreRetriever") as span:
            span.set_attributes(
                {
                    "gen_ai.operation.name": "vector_db_retrieve",
                    TL.TRACELOOP_SPAN_KIND: "task",
                    TL.TRACELOOP_ENTITY_INPUT: json.dumps({"query": QUESTION}),
                    TL.TRACELOOP_ENTITY_OUTPUT: json.dumps(
                        {
                            "documents": [
                                {"page_content": t, "metadata": {"id": i}} for i, t, _ in DOCS
                            ],
                            "count": 3,
                        }
                    ),
                }
            )
        with tracer.start_as_current_span("openai.chat") as span:
            span.set_attributes(
                {
                    "gen_ai.request.model": "gpt-4o-mini",
                    f"{TL.LLM_PROMPTS}.0.role": "user",
                    f"{TL.LLM_PROMPTS}.0.content": "Context: ... Question: " + QUESTION,
                    f"{TL.LLM_COMPLETIONS}.0.role": "assistant",
                    f"{TL.LLM_COMPLETIONS}.0.content": ANSWER,
                }
            )


def test_openllmetry_entities_and_flattened_completions(receiver: Receiver, encoding: str) -> None:
    """Workflow input, retriever documents and gen_ai.completion content join into a record."""
    assert receiver.post("/v1/traces", produce(openllmetry_legacy), encoding) == 200
    record = receiver.record()
    assert (record.question, record.answer) == (QUESTION, ANSWER)
    assert [c.text for c in record.chunks] == [t for _, t, _ in DOCS]
    assert record.chunks[0].metadata == {"id": "kb-1"}
    assert record.labels["model"] == "gpt-4o-mini"
    assert record.convention == "openllmetry"


def openllmetry_vector_db(tracer: Tracer) -> None:
    with tracer.start_as_current_span("handler"):
        with tracer.start_as_current_span("chroma.query") as span:
            span.set_attribute("db.system", "chroma")
            for doc_id, text, score in DOCS:
                span.add_event(
                    Events.DB_QUERY_RESULT.value,
                    {
                        EventAttributes.DB_QUERY_RESULT_ID.value: doc_id,
                        EventAttributes.DB_QUERY_RESULT_DOCUMENT.value: text,
                        EventAttributes.DB_QUERY_RESULT_DISTANCE.value: 1 - score,
                    },
                )
        with tracer.start_as_current_span("openai.chat") as span:
            span.set_attributes(
                {
                    "gen_ai.operation.name": "chat",
                    "gen_ai.request.model": "gpt-4o-mini",
                    "gen_ai.input.messages": json.dumps(
                        [{"role": "user", "parts": [{"type": "text", "content": QUESTION}]}]
                    ),
                    "gen_ai.output.messages": json.dumps(
                        [
                            {
                                "role": "assistant",
                                "parts": [{"type": "text", "content": ANSWER}],
                                "finish_reason": "stop",
                            }
                        ]
                    ),
                }
            )


def test_openllmetry_vector_db_events(receiver: Receiver, encoding: str) -> None:
    """db.query.result events become ordered chunks; the 2026 message JSON gives the answer."""
    assert receiver.post("/v1/traces", produce(openllmetry_vector_db), encoding) == 200
    record = receiver.record()
    assert (record.question, record.answer) == (QUESTION, ANSWER)
    assert [(c.id, c.text) for c in record.chunks] == [(i, t) for i, t, _ in DOCS]
    assert record.chunks[2].metadata["distance"] == pytest.approx(0.88)


def genai(tracer: Tracer, documents: Any) -> None:
    with tracer.start_as_current_span("POST /ask"):
        with tracer.start_as_current_span("retrieval kb") as span:
            span.set_attributes(
                {
                    "gen_ai.operation.name": "retrieval",
                    "gen_ai.retrieval.query.text": QUESTION,
                    "gen_ai.retrieval.documents": documents,
                }
            )
        with tracer.start_as_current_span("chat gpt-4o") as span:
            span.set_attributes(
                {
                    "gen_ai.operation.name": "chat",
                    "gen_ai.request.model": "gpt-4o",
                    "gen_ai.request.temperature": 0.0,
                    "gen_ai.output.messages": json.dumps(
                        [{"role": "assistant", "parts": [{"type": "text", "content": ANSWER}]}]
                    ),
                }
            )


def test_genai_semantic_conventions(receiver: Receiver, encoding: str) -> None:
    """The retrieval span's query and JSON documents plus the inference output join."""
    documents = json.dumps([{"id": i, "score": s, "content": t} for i, t, s in DOCS])
    assert receiver.post("/v1/traces", produce(lambda t: genai(t, documents)), encoding) == 200
    record = receiver.record()
    assert (record.question, record.answer) == (QUESTION, ANSWER)
    assert [(c.id, c.text, c.score) for c in record.chunks] == DOCS
    assert record.generation == {"temperature": 0.0}
    assert record.convention == "genai"


def test_unparseable_chunk_json_is_incomplete_evidence(receiver: Receiver, encoding: str) -> None:
    """Chunk JSON that does not parse makes the record incomplete, not unfaithful."""
    broken = '[{"id": "kb-1", "content": "Refunds take 5 busi'
    assert receiver.post("/v1/traces", produce(lambda t: genai(t, broken)), encoding) == 200
    record = receiver.record()
    assert record.incomplete == "chunk JSON does not parse"


def oi_retriever(documents: dict[str, Any]) -> Callable[[Tracer], None]:
    """A LangChain-style trace whose retriever span carries ``documents`` as given."""

    def write(tracer: Tracer) -> None:
        with tracer.start_as_current_span("chain") as root:
            root.set_attributes(
                {OI.OPENINFERENCE_SPAN_KIND: Kind.CHAIN.value, OI.INPUT_VALUE: QUESTION}
            )
            with tracer.start_as_current_span("retrieve") as span:
                span.set_attributes({OI.OPENINFERENCE_SPAN_KIND: Kind.RETRIEVER.value, **documents})
            with tracer.start_as_current_span("llm") as span:
                span.set_attributes(
                    {
                        OI.OPENINFERENCE_SPAN_KIND: Kind.LLM.value,
                        f"{OI.LLM_OUTPUT_MESSAGES}.0.{Msg.MESSAGE_CONTENT}": ANSWER,
                    }
                )

    return write


def vector_db_without_text(tracer: Tracer) -> None:
    with tracer.start_as_current_span("handler"):
        with tracer.start_as_current_span("chroma.query") as span:
            span.set_attribute("db.system", "chroma")
            span.add_event(
                Events.DB_QUERY_RESULT.value,
                {
                    EventAttributes.DB_QUERY_RESULT_ID.value: "kb-1",
                    EventAttributes.DB_QUERY_RESULT_DOCUMENT.value: DOCS[0][1],
                },
            )
            span.add_event(  # ids and distances only: Chroma queried without documents
                Events.DB_QUERY_RESULT.value, {EventAttributes.DB_QUERY_RESULT_ID.value: "kb-2"}
            )
        with tracer.start_as_current_span("openai.chat") as span:
            span.set_attributes(
                {"gen_ai.operation.name": "chat", "gen_ai.completion.0.content": ANSWER}
            )


FLAT = OI.RETRIEVAL_DOCUMENTS
UNREADABLE_EVIDENCE = {
    "packed JSON item not an object": (
        lambda t: genai(t, json.dumps([{"id": "kb-1", "content": DOCS[0][1]}, "kb-2"])),
        "chunk 1 is not an object",
    ),
    "packed JSON not a list": (
        lambda t: genai(t, json.dumps({"id": "kb-1", "content": DOCS[0][1]})),
        "chunk JSON is not a list",
    ),
    "packed chunk without text": (
        lambda t: genai(t, json.dumps([{"id": "kb-1", "score": 0.9}])),
        "chunk 0 has no text",
    ),
    "flattened keys with a gap": (
        oi_retriever(
            {
                f"{FLAT}.0.{Doc.DOCUMENT_CONTENT}": DOCS[0][1],
                f"{FLAT}.2.{Doc.DOCUMENT_CONTENT}": DOCS[2][1],
            }
        ),
        "flattened chunk keys skip index 1",
    ),
    "flattened key with no index": (
        oi_retriever(
            {
                f"{FLAT}.0.{Doc.DOCUMENT_CONTENT}": DOCS[0][1],
                f"{FLAT}.first.{Doc.DOCUMENT_CONTENT}": DOCS[1][1],
            }
        ),
        "a flattened chunk key does not parse",
    ),
    "only unreadable flattened keys": (
        oi_retriever({f"{FLAT}.x.{Doc.DOCUMENT_CONTENT}": DOCS[0][1]}),
        "a flattened chunk key does not parse",
    ),
    "flattened chunk without text": (
        oi_retriever(
            {
                f"{FLAT}.0.{Doc.DOCUMENT_CONTENT}": DOCS[0][1],
                f"{FLAT}.1.{Doc.DOCUMENT_ID}": "kb-2",
            }
        ),
        "chunk 1 has no text",
    ),
    "vector-db event without text": (vector_db_without_text, "chunk 1 has no text"),
}


@pytest.mark.parametrize("case", list(UNREADABLE_EVIDENCE))
def test_unreadable_chunks_are_incomplete_evidence(
    receiver: Receiver, encoding: str, case: str
) -> None:
    """Chunk JSON or keys that cannot be read, or a chunk without text, are flagged, not skipped."""
    write, reason = UNREADABLE_EVIDENCE[case]
    assert receiver.post("/v1/traces", produce(write), encoding) == 200
    record = receiver.record()
    assert record.answer == ANSWER
    assert record.incomplete == reason


def any_value(value: Any) -> AnyValue:
    if isinstance(value, dict):
        return AnyValue(
            kvlist_value=KeyValueList(
                values=[KeyValue(key=k, value=any_value(v)) for k, v in value.items()]
            )
        )
    if isinstance(value, int):
        return AnyValue(int_value=value)
    return AnyValue(string_value=str(value))


def test_legacy_genai_log_events_join_their_trace(receiver: Receiver, encoding: str) -> None:
    """gen_ai.user.message and gen_ai.choice log events give question and answer."""

    def spans(tracer: Tracer) -> None:
        with tracer.start_as_current_span("handler"):
            with tracer.start_as_current_span("retrieve") as span:
                span.set_attributes(
                    {
                        OI.OPENINFERENCE_SPAN_KIND: Kind.RETRIEVER.value,
                        **oi_documents(OI.RETRIEVAL_DOCUMENTS, DOCS[:1]),
                    }
                )
            with tracer.start_as_current_span("chat gpt-4o") as span:
                span.set_attributes({"gen_ai.system": "openai", "gen_ai.request.model": "gpt-4o"})

    traces = produce(spans)
    trace_id = traces.resource_spans[0].scope_spans[0].spans[0].trace_id  # type: ignore[attr-defined]
    logs = ExportLogsServiceRequest()
    scope = logs.resource_logs.add().scope_logs.add()
    for event, body in [
        ("gen_ai.user.message", {"content": QUESTION}),
        ("gen_ai.choice", {"index": 0, "message": {"content": ANSWER}}),
    ]:
        record = scope.log_records.add(trace_id=trace_id, event_name=event)
        record.body.CopyFrom(any_value(body))
    assert receiver.post("/v1/logs", logs, encoding) == 200
    assert receiver.post("/v1/traces", traces, encoding) == 200
    record = receiver.record()
    assert (record.question, record.answer) == (QUESTION, ANSWER)
    assert [c.text for c in record.chunks] == [DOCS[0][1]]
    assert record.labels["model"] == "gpt-4o"
