"""Figure 4 of ``bench/run.py``: the shim's cost per request, µs per ``rag_span`` of
10 chunks of 1 KB against the same three spans written by hand with the SDK."""

from __future__ import annotations

import json
import random
import time
from typing import Any

from common import Figure, alternate
from opentelemetry.sdk.trace import TracerProvider
from run_demo import SEED, SERVICE, DiscardProcessor

import faithmon_instrumentation as fm
from faithmon_instrumentation.attributes import document_checks

CHUNKS = 10
CHUNK_BYTES = 1024


def _chunks() -> list[dict[str, object]]:
    rng = random.Random(SEED)
    words = "refund invoice parcel courier label warehouse business days euros".split()
    chunks: list[dict[str, object]] = []
    for i in range(CHUNKS):
        text = ""
        while len(text) < CHUNK_BYTES:
            text += rng.choice(words) + " "
        chunks.append(
            {
                "id": f"doc-{i}",
                "text": text[:CHUNK_BYTES],
                "score": round(1 - i / CHUNKS, 3),
                "metadata": {"source": "bench"},
            }
        )
    return chunks


def bench_span(repetitions: int, iterations: int) -> Figure:
    chunks = _chunks()
    question = "How long do refunds take to reach my payment method?"
    answer = "Refunds are sent to the original payment method within 5 business days."

    def rag_spans(count: int) -> float:
        started = time.perf_counter()
        for _ in range(count):
            with fm.rag_span(question, route="billing", tenant="acme") as rag:
                rag.record_retrieval(chunks, retriever="bench", retriever_version="v1")
                rag.record_answer(answer, model="bench-llm")
        return (time.perf_counter() - started) / count * 1e6

    provider = TracerProvider()
    provider.add_span_processor(DiscardProcessor())
    tracer = provider.get_tracer("faithmon.bench")

    # What an app writing the same spans by hand would set; values it would not
    # compute itself (the shim's evidence checks) are taken as given.
    checks = document_checks([str(c["text"]) for c in chunks])

    def bare_spans(count: int) -> float:
        """The same three spans with the same attributes, written by hand with the SDK."""
        started = time.perf_counter()
        for _ in range(count):
            with tracer.start_as_current_span("rag.request") as root:
                root.set_attributes(
                    {
                        "faithmon.label.route": "billing",
                        "faithmon.label.tenant": "acme",
                        "faithmon.role": "request",
                        "input.value": question,
                        "openinference.span.kind": "CHAIN",
                    }
                )
                documents: dict[str, Any] = {}
                for i, chunk in enumerate(chunks):
                    key = f"retrieval.documents.{i}.document."
                    documents[key + "content"] = chunk["text"]
                    documents[key + "id"] = chunk["id"]
                    documents[key + "score"] = chunk["score"]
                    documents[key + "metadata"] = json.dumps(chunk["metadata"], sort_keys=True)
                documents.update(
                    {
                        "faithmon.retrieval.document_count": len(chunks),
                        "faithmon.retrieval.document_checks": checks,
                        "faithmon.retriever.name": "bench",
                        "faithmon.retriever.version": "v1",
                        "gen_ai.operation.name": "retrieval",
                        "gen_ai.retrieval.query.text": question,
                        "input.value": question,
                        "faithmon.role": "retrieval",
                        "openinference.span.kind": "RETRIEVER",
                    }
                )
                retrieval = tracer.start_span("rag.retrieve")
                retrieval.set_attributes(documents)
                retrieval.end()
                generation = tracer.start_span("rag.generate")
                generation.set_attributes(
                    {
                        "gen_ai.operation.name": "chat",
                        "llm.output_messages.0.message.role": "assistant",
                        "llm.output_messages.0.message.content": answer,
                        "llm.model_name": "bench-llm",
                        "gen_ai.request.model": "bench-llm",
                        "output.value": answer,
                        "faithmon.role": "generation",
                        "openinference.span.kind": "LLM",
                    }
                )
                generation.end()
                root.set_attribute("output.value", answer)
        return (time.perf_counter() - started) / count * 1e6

    fm.setup(service_name=SERVICE, processors=[DiscardProcessor()], export=False)
    try:
        rag_spans(50)
        bare_spans(50)
        samples, baseline = alternate(
            repetitions, lambda: rag_spans(iterations), lambda: bare_spans(iterations)
        )
    finally:
        fm.shutdown()
        provider.shutdown()
    return Figure(
        f"rag_span, {CHUNKS} chunks of {CHUNK_BYTES // 1024} KB (3 spans)",
        "µs",
        samples,
        "same spans and attributes by hand (SDK)",
        baseline,
        higher_is_better=False,
    )
