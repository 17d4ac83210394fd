"""extract(): the spans of one trace become one RagRecord, or None for non-RAG traces."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime

import pytest
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import faithmon_instrumentation as fm
from faithmon.ingest.extract import extract
from faithmon.ingest.processor import from_readable
from faithmon.ingest.spans import IngestSpan
from faithmon.model import Chunk
from faithmon.store.records import INCOMPLETE_EVIDENCE, NO_CONTEXT, initial_status


@pytest.fixture
def tracer_provider(span_exporter: InMemorySpanExporter) -> Iterator[TracerProvider]:
    """A plain SDK provider (as another instrumentation would use) on the same exporter."""
    provider = TracerProvider(resource=Resource.create({"service.name": "langchain-app"}))
    provider.add_span_processor(SimpleSpanProcessor(span_exporter))
    yield provider
    provider.shutdown()


def ingest_spans(exporter: InMemorySpanExporter) -> list[IngestSpan]:
    spans = [from_readable(span) for span in exporter.get_finished_spans()]
    assert all(span is not None for span in spans)
    return [span for span in spans if span is not None]


def test_shim_trace_becomes_a_record(span_exporter: InMemorySpanExporter) -> None:
    """Question, answer, ordered chunks with id/score/metadata and the trace id are extracted."""
    with fm.rag_span("Where is order A17?") as rag:
        rag.record_retrieval(
            [
                {"text": "Order A17 shipped on 3 March.", "id": "kb-1", "score": 0.9},
                fm.Chunk("Couriers deliver in 2 days.", id="kb-2", metadata={"page": 4}),
                "Returns take 14 days.",
            ]
        )
        rag.record_answer("Order A17 shipped on 3 March.", model="gpt-4o-mini")

    record = extract(ingest_spans(span_exporter))

    assert record is not None
    request = next(s for s in span_exporter.get_finished_spans() if s.name == "rag.request")
    assert record.trace_id == f"{request.context.trace_id:032x}"
    assert record.question == "Where is order A17?"
    assert record.answer == "Order A17 shipped on 3 March."
    assert record.chunks == (
        Chunk(0, "Order A17 shipped on 3 March.", id="kb-1", score=0.9),
        Chunk(1, "Couriers deliver in 2 days.", id="kb-2", metadata={"page": 4}),
        Chunk(2, "Returns take 14 days."),
    )
    assert record.sample_reason == "sampled"


def test_chunk_order_follows_document_index_not_attribute_order(
    span_exporter: InMemorySpanExporter,
) -> None:
    """Twelve chunks come back in retrieval order (index 10 after 9, not after 1)."""
    texts = [f"Chunk text number {i}." for i in range(12)]
    with fm.rag_span("q") as rag:
        rag.record_retrieval(texts)
        rag.record_answer("a")

    record = extract(ingest_spans(span_exporter))

    assert record is not None
    assert [c.text for c in record.chunks] == texts
    assert [c.position for c in record.chunks] == list(range(12))


def test_labels_and_started_at(span_exporter: InMemorySpanExporter) -> None:
    """Labels hold service, model, retriever, retriever_version, route and tenant."""
    with fm.rag_span("q", route="billing", tenant="acme", beta=True) as rag:
        rag.record_retrieval(["c"], retriever="pgvector", retriever_version="v3")
        rag.record_answer("a", model="gpt-4o-mini")

    record = extract(ingest_spans(span_exporter))

    assert record is not None
    assert record.labels == {
        "service": "support-bot",
        "model": "gpt-4o-mini",
        "retriever": "pgvector",
        "retriever_version": "v3",
        "route": "billing",
        "tenant": "acme",
        "beta": "true",
    }
    request = next(s for s in span_exporter.get_finished_spans() if s.name == "rag.request")
    assert request.start_time is not None
    assert record.started_at == datetime.fromtimestamp(request.start_time / 1e9, tz=UTC)
    assert record.started_at.tzinfo is UTC


def test_trace_without_rag_content_gives_none(
    tracer_provider: TracerProvider, span_exporter: InMemorySpanExporter
) -> None:
    """A trace of ordinary spans (an HTTP handler and a DB query) is not a RAG record."""
    tracer = tracer_provider.get_tracer("web")
    with tracer.start_as_current_span("GET /health") as span:
        span.set_attribute("http.route", "/health")
        with tracer.start_as_current_span("SELECT 1"):
            pass

    assert extract(ingest_spans(span_exporter)) is None


def test_empty_trace_gives_none() -> None:
    """No spans, no record."""
    assert extract([]) is None


def test_openinference_retriever_and_llm_spans_give_a_record(
    tracer_provider: TracerProvider, span_exporter: InMemorySpanExporter
) -> None:
    """A LangChain-style trace (chain, retriever with content/metadata only, LLM) is read."""
    tracer = tracer_provider.get_tracer("openinference.instrumentation.langchain")
    with tracer.start_as_current_span("RunnableSequence") as chain:
        chain.set_attributes(
            {"openinference.span.kind": "CHAIN", "input.value": "How long do refunds take?"}
        )
        with tracer.start_as_current_span("VectorStoreRetriever") as retriever:
            retriever.set_attributes(
                {
                    "openinference.span.kind": "RETRIEVER",
                    "input.value": "How long do refunds take?",
                    "retrieval.documents.0.document.content": "Refunds take 5 business days.",
                    "retrieval.documents.0.document.metadata": json.dumps({"source": "faq.md"}),
                    "retrieval.documents.1.document.content": "Refunds go to the card used.",
                }
            )
        with tracer.start_as_current_span("ChatOpenAI") as llm:
            llm.set_attributes(
                {
                    "openinference.span.kind": "LLM",
                    "llm.model_name": "gpt-4o",
                    "llm.output_messages.0.message.role": "assistant",
                    "llm.output_messages.0.message.content": "Refunds take 5 business days.",
                }
            )

    record = extract(ingest_spans(span_exporter))

    assert record is not None
    assert record.question == "How long do refunds take?"
    assert record.answer == "Refunds take 5 business days."
    assert record.chunks == (
        Chunk(0, "Refunds take 5 business days.", metadata={"source": "faq.md"}),
        Chunk(1, "Refunds go to the card used."),
    )
    assert all(c.id is None and c.score is None for c in record.chunks)
    assert record.labels == {"service": "langchain-app", "model": "gpt-4o"}


def test_packed_documents_on_an_apps_default_provider_arrive_whole() -> None:
    """50 chunks of 4 KB packed into one JSON attribute extract whole, with checks passing."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()  # the SDK's default limits: 128 attributes per span
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    texts = [f"chunk {i} " + "w" * 4090 for i in range(50)]
    fm.setup(tracer_provider=provider)
    try:
        with fm.rag_span("q") as rag:
            rag.record_retrieval(
                [{"text": t, "id": f"d{i}", "score": 1 / (i + 1)} for i, t in enumerate(texts)]
            )
            rag.record_answer("a")
    finally:
        fm.shutdown()
    record = extract(ingest_spans(exporter))
    assert record is not None and record.incomplete is None
    assert [c.text for c in record.chunks] == texts
    assert [c.id for c in record.chunks] == [f"d{i}" for i in range(50)]
    assert record.chunks[3].score == 0.25


def test_context_beats_rerank_beats_retrieval(span_exporter: InMemorySpanExporter) -> None:
    """The judged chunks are the explicit context; the retrieved list is kept beside them."""
    with fm.rag_span("q") as rag:
        rag.record_retrieval(["a", "b", "c"])
        rag.record_rerank(["c", "b"])
        rag.record_context(["c"])
        rag.record_answer("c", model="m", temperature=0)
        rag.keep("canary")
    record = extract(ingest_spans(span_exporter))
    assert record is not None
    assert [c.text for c in record.chunks] == ["c"]
    assert [c.text for c in record.retrieved] == ["a", "b", "c"]
    assert record.generation == {"temperature": 0}
    assert record.keep == "canary"


def test_cut_or_missing_chunks_make_the_record_incomplete(
    span_exporter: InMemorySpanExporter,
) -> None:
    """Chunks whose text or count no longer match the shim's checks are flagged, not judged."""
    with fm.rag_span("q") as rag:
        rag.record_retrieval(["Order A17 shipped on 3 March.", "Second chunk."])
        rag.record_answer("a")
    spans = ingest_spans(span_exporter)

    def tamper(span: IngestSpan, drop: str | None = None, cut: str | None = None) -> IngestSpan:
        attributes = dict(span.attributes)
        if drop:
            del attributes[drop]
        if cut:
            attributes[cut] = str(attributes[cut])[:10]
        return replace(span, attributes=attributes)

    key = "retrieval.documents.0.document.content"
    retrieval = next(s for s in spans if s.name == "rag.retrieve")
    others = [s for s in spans if s is not retrieval]
    cut = extract([*others, tamper(retrieval, cut=key)])
    assert cut is not None and cut.incomplete == "1 of 2 chunks arrived cut or altered"
    dropped = extract([*others, tamper(retrieval, drop=key)])
    assert dropped is not None and dropped.incomplete == "1 of 2 chunks arrived"
    whole = extract(spans)
    assert whole is not None and whole.incomplete is None


def test_chunks_retrieved_after_the_generation_are_not_judged(
    span_exporter: InMemorySpanExporter,
) -> None:
    """The judged list is the last one that ended before the answer was generated."""
    with fm.rag_span("q") as rag:
        rag.record_retrieval(["seen by the generator"])
        rag.record_answer("answer")
        rag.record_retrieval(["fetched afterwards, for citations"])
    record = extract(ingest_spans(span_exporter))
    assert record is not None
    assert [c.text for c in record.chunks] == ["seen by the generator"]


def test_a_lost_retrieval_span_is_incomplete_evidence_not_no_context(
    span_exporter: InMemorySpanExporter,
) -> None:
    """The request span counts its children; one lost in export makes the record incomplete."""
    with fm.rag_span("q") as rag:
        rag.record_retrieval(["Order A17 shipped on 3 March.", "Second chunk."])
        rag.record_rerank(["Second chunk."])
        rag.record_answer("a")
    spans = ingest_spans(span_exporter)

    def without(name: str) -> list[IngestSpan]:
        return [s for s in spans if s.name != name]

    lost_retrieval = extract(without("rag.retrieve"))
    assert lost_retrieval is not None
    assert lost_retrieval.incomplete == "retrieval span missing: expected 1, got 0"
    assert initial_status(lost_retrieval) == INCOMPLETE_EVIDENCE
    lost_rerank = extract(without("rag.rerank"))
    assert lost_rerank is not None
    assert lost_rerank.incomplete == "rerank span missing: expected 1, got 0"
    whole = extract(spans)
    assert whole is not None and whole.incomplete is None


def test_a_request_without_retrieval_is_still_no_context(
    span_exporter: InMemorySpanExporter,
) -> None:
    """A request that recorded no retrieval counts zero, and is no_context, not incomplete."""
    with fm.rag_span("What is the weather?") as rag:
        rag.record_answer("I can't help with that.")
    record = extract(ingest_spans(span_exporter))
    assert record is not None and record.incomplete is None
    assert initial_status(record) == NO_CONTEXT


def test_request_spans_without_counts_are_not_checked(
    span_exporter: InMemorySpanExporter,
) -> None:
    """An older shim sets no counts: a trace without retrieval is then taken as it is."""
    with fm.rag_span("q") as rag:
        rag.record_retrieval(["chunk"])
        rag.record_answer("a")
    spans = []
    for span in ingest_spans(span_exporter):
        if span.name == "rag.retrieve":
            continue
        attributes = {
            k: v for k, v in span.attributes.items() if not k.startswith("faithmon.request.")
        }
        spans.append(replace(span, attributes=attributes))
    record = extract(spans)
    assert record is not None and record.incomplete is None and record.chunks == ()


def test_chunks_counted_but_not_arrived_make_the_record_incomplete(
    span_exporter: InMemorySpanExporter,
) -> None:
    """A request span that counted more chunks than its children carry flags the record."""
    with fm.rag_span("q") as rag:
        rag.record_retrieval(["a", "b"])
        rag.record_answer("a")
    spans = [
        replace(s, attributes={**s.attributes, "faithmon.request.chunks": 5})
        if s.name == "rag.request"
        else s
        for s in ingest_spans(span_exporter)
    ]
    record = extract(spans)
    assert record is not None and record.incomplete == "chunks missing: expected 5, got 2"
