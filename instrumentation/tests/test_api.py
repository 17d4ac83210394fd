"""The shim's wider API: rerank, context, decorators, async, keep, feedback, faults, limits.

Only OpenTelemetry and faithmon_instrumentation are imported here, never faithmon.
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
from collections.abc import AsyncIterator, Iterator, Sequence

import pytest
from opentelemetry.sdk.trace import ReadableSpan, SpanLimits, TracerProvider
from opentelemetry.sdk.trace.export import (
    SimpleSpanProcessor,
    SpanExporter,
    SpanExportResult,
)
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode

import faithmon_instrumentation as fm
from faithmon_instrumentation import _log
from faithmon_instrumentation import attributes as attr


@pytest.fixture(autouse=True)
def fresh_shim() -> Iterator[None]:
    fm.shutdown()
    _log.reset()
    yield
    fm.shutdown()


@pytest.fixture
def span_exporter() -> InMemorySpanExporter:
    exporter = InMemorySpanExporter()
    fm.setup(processors=[SimpleSpanProcessor(exporter)], export=False)
    return exporter


def named(exporter: InMemorySpanExporter, name: str) -> list[ReadableSpan]:
    return [s for s in exporter.get_finished_spans() if s.name == name]


def contents(span: ReadableSpan, prefix: str = attr.RETRIEVAL_DOCUMENTS) -> list[str]:
    attributes = span.attributes or {}
    count = int(attributes[attr.DOCUMENT_COUNT])  # type: ignore[arg-type]
    packed = attributes.get(attr.GEN_AI_RETRIEVAL_DOCUMENTS)
    if isinstance(packed, str):
        return [d["content"] for d in json.loads(packed)]
    return [
        str(attributes[attr.document_key(i, attr.DOCUMENT_CONTENT, prefix)]) for i in range(count)
    ]


def test_rerank_and_context_are_kept_beside_retrieval(span_exporter: InMemorySpanExporter) -> None:
    """Retrieval, rerank and explicit context each get a span with their own chunk list."""
    with fm.rag_span("q") as rag:
        rag.record_retrieval(["a", "b", "c"], retriever="bm25")
        rag.record_rerank(["c", "a"], reranker="cross-encoder", reranker_version="v2")
        rag.record_context(["c"])
    [rerank] = named(span_exporter, attr.SPAN_RERANK)
    [context] = named(span_exporter, attr.SPAN_CONTEXT)
    [retrieval] = named(span_exporter, attr.SPAN_RETRIEVAL)
    assert contents(retrieval) == ["a", "b", "c"]
    assert contents(rerank, attr.RERANKER_OUTPUT_DOCUMENTS) == ["c", "a"]
    assert contents(context) == ["c"]
    assert rerank.attributes[attr.OI_SPAN_KIND] == attr.OI_KIND_RERANKER
    assert rerank.attributes[attr.RERANKER_VERSION] == "v2"
    assert context.attributes[attr.FAITHMON_ROLE] == attr.ROLE_CONTEXT
    assert retrieval.attributes[attr.DOCUMENT_CHECKS] == attr.document_checks(["a", "b", "c"])


def test_request_span_counts_its_documents_spans(span_exporter: InMemorySpanExporter) -> None:
    """The request span records how many retrieval/rerank/context spans and chunks it emitted."""
    with fm.rag_span("q") as rag:
        rag.record_retrieval(["a", "b", "c"])
        rag.record_retrieval(["d"])
        rag.record_rerank(["c", "a"])
        rag.record_context(["c"])
        rag.record_retrieval([object()])  # unreadable: no span, so not counted
    with fm.rag_span("no retrieval") as rag:
        rag.record_answer("a")
    first, second = named(span_exporter, attr.SPAN_REQUEST)
    assert first.attributes[attr.REQUEST_RETRIEVALS] == 2
    assert first.attributes[attr.REQUEST_RERANKS] == 1
    assert first.attributes[attr.REQUEST_CONTEXTS] == 1
    assert first.attributes[attr.REQUEST_CHUNKS] == 7
    assert second.attributes[attr.REQUEST_RETRIEVALS] == 0
    assert second.attributes[attr.REQUEST_CHUNKS] == 0


def test_generation_settings_and_keep(span_exporter: InMemorySpanExporter) -> None:
    """Settings land as gen_ai.request.* and llm.invocation_parameters; keep marks the root."""
    with fm.rag_span("q", language="en", prompt_version="p7") as rag:
        rag.record_answer("a", model="m", temperature=0.2, seed=7)
        rag.keep("canary")
    [generation] = named(span_exporter, attr.SPAN_GENERATION)
    [request] = named(span_exporter, attr.SPAN_REQUEST)
    assert generation.attributes["gen_ai.request.temperature"] == 0.2
    assert json.loads(str(generation.attributes[attr.LLM_INVOCATION_PARAMETERS])) == {
        "seed": 7,
        "temperature": 0.2,
    }
    assert request.attributes[attr.KEEP] == "canary"
    assert request.attributes[attr.LABEL_PREFIX + "prompt_version"] == "p7"


def test_feedback_names_the_earlier_trace(span_exporter: InMemorySpanExporter) -> None:
    """record_feedback emits a feedback span carrying the request's trace id."""
    with fm.rag_span("q") as rag:
        trace_id = rag.trace_id
    fm.record_feedback(trace_id, "thumbs_down")
    fm.record_feedback("not-a-trace-id", 1)
    [feedback] = named(span_exporter, attr.SPAN_FEEDBACK)
    assert feedback.attributes[attr.FEEDBACK_TRACE_ID] == trace_id
    assert feedback.attributes[attr.FEEDBACK_VALUE] == "thumbs_down"
    assert len(trace_id) == 32


@fm.retriever(name="kb", version="v1")
def search(question: str) -> list[str]:
    return [f"chunk for {question}"]


@fm.retriever
def search_stream(question: str) -> Iterator[str]:
    yield "first"
    yield "second"


@fm.generator(model="m1", temperature=0)
def answer(question: str, chunks: Sequence[str]) -> str:
    return "An answer."


@fm.generator(model="m2")
async def answer_stream(question: str) -> AsyncIterator[str]:
    for token in ("Streamed ", "answer."):
        yield token


@fm.retriever
async def search_async(question: str) -> list[dict[str, object]]:
    return [{"text": "async chunk", "id": "d1", "score": 0.5}]


def test_decorators_record_sync_functions_and_generators(
    span_exporter: InMemorySpanExporter,
) -> None:
    """@retriever and @generator record what plain functions and generators produce."""
    with fm.rag_span("q"):
        chunks = search("q")
        streamed = list(search_stream("q"))
        assert answer("q", chunks) == "An answer."
    assert streamed == ["first", "second"]
    retrievals = named(span_exporter, attr.SPAN_RETRIEVAL)
    assert [contents(s) for s in retrievals] == [["chunk for q"], ["first", "second"]]
    assert retrievals[0].attributes[attr.RETRIEVER_NAME] == "kb"
    assert retrievals[1].attributes[attr.RETRIEVER_NAME] == "search_stream"
    [generation] = named(span_exporter, attr.SPAN_GENERATION)
    assert generation.attributes[attr.OUTPUT_VALUE] == "An answer."
    assert generation.attributes[attr.LLM_MODEL_NAME] == "m1"


def test_async_rag_span_and_async_decorators(span_exporter: InMemorySpanExporter) -> None:
    """async with rag_span, async functions and async generators all record."""

    async def serve() -> str:
        async with fm.rag_span("q") as rag:
            await search_async("q")
            text = "".join([t async for t in answer_stream("q")])
            return rag.trace_id + text

    result = asyncio.run(serve())
    assert result.endswith("Streamed answer.")
    [retrieval] = named(span_exporter, attr.SPAN_RETRIEVAL)
    assert contents(retrieval) == ["async chunk"]
    [generation] = named(span_exporter, attr.SPAN_GENERATION)
    assert generation.attributes[attr.OUTPUT_VALUE] == "Streamed answer."


def test_decorators_outside_a_request_only_call() -> None:
    """Without a current request the decorated function runs and nothing is recorded."""
    assert search("q") == ["chunk for q"]
    assert fm.current() is None


def test_concurrent_requests_never_mix(span_exporter: InMemorySpanExporter) -> None:
    """Requests in threads and asyncio tasks keep their own chunks and answers."""

    def in_thread(n: int, barrier: threading.Barrier) -> None:
        with fm.rag_span(f"thread {n}") as rag:
            barrier.wait()
            rag.record_retrieval([f"thread chunk {n}"])
            barrier.wait()
            rag.record_answer(f"thread answer {n}")

    barrier = threading.Barrier(4)
    threads = [threading.Thread(target=in_thread, args=(n, barrier)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    async def in_task(n: int) -> None:
        async with fm.rag_span(f"task {n}"):
            await asyncio.sleep(0)
            await search_async(f"task {n}")
            await asyncio.sleep(0)
            assert fm.current() is not None
            fm.current().record_answer(f"task answer {n}")  # type: ignore[union-attr]

    async def many() -> None:
        await asyncio.gather(*(in_task(n) for n in range(4)))

    asyncio.run(many())
    spans = span_exporter.get_finished_spans()
    roots = {s.context.trace_id: s for s in spans if s.name == attr.SPAN_REQUEST}
    assert len(roots) == 8
    for span in spans:
        if span.name == attr.SPAN_REQUEST:
            continue
        root = roots[span.context.trace_id]
        question = str(root.attributes[attr.INPUT_VALUE])
        assert span.parent is not None and span.parent.span_id == root.context.span_id
        if span.name == attr.SPAN_GENERATION:
            kind, n = question.split()
            assert span.attributes[attr.OUTPUT_VALUE] == f"{kind} answer {n}"
        elif question.startswith("thread"):
            assert contents(span) == [f"thread chunk {question.split()[1]}"]


class RaisingExporter(SpanExporter):
    """An exporter that fails every time, like a broken vendor plug-in."""

    def __init__(self) -> None:
        self.calls = 0

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        self.calls += 1
        raise RuntimeError("exporter exploded")

    def shutdown(self) -> None:
        pass


def test_faults_are_swallowed_and_logged_once(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A raising exporter, a dead collector and odd chunks never reach the app."""
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "1")
    exporter = RaisingExporter()
    fm.setup(endpoint="http://127.0.0.1:9", processors=[SimpleSpanProcessor(exporter)])
    with caplog.at_level(logging.WARNING, logger="faithmon_instrumentation"):
        for _ in range(3):
            with fm.rag_span("q") as rag:
                rag.record_retrieval([object()])
                rag.record_answer(42)  # type: ignore[arg-type]
                rag.record_answer("fine")
        fm.flush(timeout_millis=2000)
    assert exporter.calls > 0
    shim_lines = [r.getMessage() for r in caplog.records if r.name == "faithmon_instrumentation"]
    assert sum("record_retrieval failed" in line for line in shim_lines) == 1
    assert sum("record_answer failed" in line for line in shim_lines) == 1


def test_app_exception_propagates_unchanged(span_exporter: InMemorySpanExporter) -> None:
    """The app's own exception leaves rag_span as it was raised, and marks the span."""

    class AppError(Exception):
        pass

    async def failing() -> None:
        async with fm.rag_span("q"):
            raise AppError("boom")

    with pytest.raises(AppError, match="boom"):
        asyncio.run(failing())
    [request] = named(span_exporter, attr.SPAN_REQUEST)
    assert request.status.status_code is StatusCode.ERROR
    assert fm.current() is None


def test_fifty_big_chunks_fit_an_apps_default_provider() -> None:
    """On an app's provider with the SDK's default limits, 50 chunks of 4 KB arrive whole."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider(span_limits=SpanLimits())
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    texts = [f"{i:02d}" + "x" * 4094 for i in range(50)]
    fm.setup(tracer_provider=provider)
    with fm.rag_span("q") as rag:
        rag.record_retrieval([{"text": t, "id": str(i)} for i, t in enumerate(texts)])
    [retrieval] = named(exporter, attr.SPAN_RETRIEVAL)
    assert retrieval.dropped_attributes == 0
    assert contents(retrieval) == texts
    assert retrieval.attributes[attr.OI_SPAN_KIND] == attr.OI_KIND_RETRIEVER
    assert retrieval.attributes[attr.DOCUMENT_CHECKS] == attr.document_checks(texts)


def test_value_length_limit_is_warned_and_detectable(caplog: pytest.LogCaptureFixture) -> None:
    """A provider that cuts values gets a warning, and the checks no longer match the text."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider(span_limits=SpanLimits(max_span_attribute_length=100))
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    fm.setup(tracer_provider=provider)
    with (
        caplog.at_level(logging.WARNING, logger="faithmon_instrumentation"),
        fm.rag_span("q") as rag,
    ):
        rag.record_retrieval(["y" * 500])
    assert "cuts attribute values at 100 characters" in caplog.text
    [retrieval] = named(exporter, attr.SPAN_RETRIEVAL)
    arrived = contents(retrieval)
    assert retrieval.attributes[attr.DOCUMENT_CHECKS] != attr.document_checks(arrived)
