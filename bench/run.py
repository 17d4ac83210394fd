"""faithmon benchmarks: each figure with a ratio against a baseline measured in the same run.

Run from the repository root::

    python bench/run.py           # full sizes, about a minute or two on 2 cores
    python bench/run.py --quick   # small sizes, a few seconds

Figures (see bench/README.md):

1. traces/s of the demo app through the in-process pipeline into SQLite, against
   the same app whose shim writes to a provider with a do-nothing processor;
2. OTLP/HTTP receiver, spans/s and traces/s end to end into SQLite, against the
   same requests to a Starlette endpoint that answers 200 without decoding;
3. offline judge, judgements/s on the demo's answers, against sentence splitting;
4. µs per ``rag_span`` with 10 chunks of 1 KB, against the same three spans and
   attributes written by hand with the SDK (goal: at most 1.2 times).

Every figure is the median of several repetitions, timed with
``time.perf_counter``; figure and baseline repetitions alternate. Traffic goes to
127.0.0.1 only. Results are also written to ``bench/results/latest.json``.
"""

from __future__ import annotations

import argparse
import http.client
import itertools
import json
import logging
import platform
import random
import socket
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import uvicorn
from common import (
    PROTOBUF,
    RESULTS_DIR,
    SCRUB_KEY,
    Figure,
    accept,
    alternate,
    by_trace,
    cpus,
    encode_bodies,
    relative,
)
from common import render as common_render
from opentelemetry.sdk.trace import SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from starlette.applications import Starlette
from starlette.routing import Route
from starlette.types import ASGIApp

import faithmon_instrumentation as fm
from faithmon import runtime
from faithmon.config import Settings
from faithmon.demo import app as demo
from faithmon.ingest.http import create_app
from faithmon.ingest.pipeline import Pipeline
from faithmon.ingest.processor import PipelineSpanProcessor
from faithmon.judge import OfflineJudge
from faithmon.judge import text as judge_text
from faithmon.store import repo
from faithmon_instrumentation.attributes import document_checks

RESULTS = RESULTS_DIR / "latest.json"
SERVICE = "northwind-help"
SEED = 7
# The demo's second half: 40% of traffic on the model that invents facts.
NEW_MODEL_SHARE = 0.4
# The in-process pipeline builds and saves records every this many traces, as a tick would.
FLUSH_EVERY = 100
# Traces per OTLP request body (3 spans each), like a BatchSpanProcessor export.
TRACES_PER_REQUEST = 20
CHUNKS = 10
CHUNK_BYTES = 1024


@dataclass(frozen=True, slots=True)
class Sizes:
    repetitions: int
    demo_traces: int
    otlp_traces: int
    judge_items: int
    span_iterations: int


QUICK = Sizes(repetitions=3, demo_traces=150, otlp_traces=200, judge_items=300, span_iterations=300)
FULL = Sizes(
    repetitions=5, demo_traces=3000, otlp_traces=5000, judge_items=10000, span_iterations=6000
)


class DiscardProcessor(SpanProcessor):
    """A span processor that takes every span and does nothing with it."""


def _settings(database: Path) -> Settings:
    return Settings.from_env({}, database_url=f"sqlite:///{database}", scrub_key=SCRUB_KEY)


def _requests(count: int) -> list[demo.Request]:
    rng = random.Random(SEED)
    return [demo.make_request(rng, NEW_MODEL_SHARE) for _ in range(count)]


def _serve_demo(requests: Sequence[demo.Request], flush: Callable[[], object] | None) -> float:
    """Send the requests through the instrumented app; returns the seconds it took."""
    rng = random.Random(SEED)
    started = time.perf_counter()
    for number, request in enumerate(requests, 1):
        demo.handle(request, rng)
        if flush is not None and number % FLUSH_EVERY == 0:
            flush()
    if flush is not None:
        flush()
    return time.perf_counter() - started


def _stored(settings: Settings) -> int:
    with runtime.open_store(settings, upgrade=False) as sessions, sessions() as session:
        return sum(repo.counts_by_status(session).values())


def _check(pipeline: Pipeline, settings: Settings, traces: int) -> None:
    """A figure only counts when every trace became a stored record."""
    stored = _stored(settings)
    if pipeline.stats["records"] != traces or stored != traces:
        raise RuntimeError(
            f"expected {traces} records, pipeline saved {pipeline.stats['records']} "
            f"and the store holds {stored} ({dict(pipeline.stats)})"
        )


# 1. The demo app through the in-process pipeline.


def bench_demo(sizes: Sizes, workdir: Path) -> Figure:
    requests = _requests(sizes.demo_traces)
    counter = itertools.count()

    def pipeline_run() -> float:
        settings = _settings(workdir / f"demo-{next(counter)}.db")
        with runtime.open_store(settings) as sessions:
            pipeline = runtime.make_pipeline(settings, runtime.make_save(sessions), quiet_seconds=0)
            fm.setup(
                service_name=SERVICE,
                processors=[PipelineSpanProcessor(pipeline.submit)],
                export=False,
            )
            try:
                seconds = _serve_demo(requests, pipeline.flush_all)
            finally:
                fm.shutdown()
        _check(pipeline, settings, len(requests))
        return len(requests) / seconds

    def discard_run() -> float:
        fm.setup(service_name=SERVICE, processors=[DiscardProcessor()], export=False)
        try:
            seconds = _serve_demo(requests, None)
        finally:
            fm.shutdown()
        return len(requests) / seconds

    samples, baseline = alternate(sizes.repetitions, pipeline_run, discard_run)
    return Figure(
        "demo app → in-process pipeline → SQLite",
        "traces/s",
        samples,
        "same app, shim → no-op processor",
        baseline,
        higher_is_better=True,
    )


# 2. The OTLP/HTTP receiver.


def _encode_bodies(count: int) -> tuple[list[bytes], int]:
    """Shim traces of the demo app as OTLP protobuf bodies; returns them and the span count."""
    exporter = InMemorySpanExporter()
    fm.setup(service_name=SERVICE, processors=[SimpleSpanProcessor(exporter)], export=False)
    try:
        _serve_demo(_requests(count), None)
    finally:
        fm.shutdown()
    spans = exporter.get_finished_spans()
    traces = by_trace(spans)
    if len(traces) != count:
        raise RuntimeError(f"expected {count} traces, the exporter holds {len(traces)}")
    bodies = encode_bodies(traces, TRACES_PER_REQUEST)
    return bodies, len(spans)


@contextmanager
def _server(app: ASGIApp) -> Iterator[int]:
    """Serve ``app`` with uvicorn on 127.0.0.1 in a background thread; yields the port."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # else replies wait ~40 ms
    sock.bind(("127.0.0.1", 0))
    port: int = sock.getsockname()[1]
    server = uvicorn.Server(
        uvicorn.Config(app, log_level="warning", access_log=False, lifespan="on")
    )
    thread = threading.Thread(
        target=server.run, kwargs={"sockets": [sock]}, name="bench-uvicorn", daemon=True
    )
    thread.start()
    try:
        deadline = time.monotonic() + 10
        while not server.started:
            if not thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("uvicorn did not start")
            time.sleep(0.01)
        yield port
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()


def _post_all(port: int, bodies: Sequence[bytes]) -> None:
    """POST every body on one keep-alive connection; each must be answered 200."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        for body in bodies:
            connection.request("POST", "/v1/traces", body=body, headers={"Content-Type": PROTOBUF})
            response = connection.getresponse()
            response.read()
            if response.status != 200:
                raise RuntimeError(f"POST /v1/traces answered {response.status}")
    finally:
        connection.close()


def bench_otlp(sizes: Sizes, workdir: Path) -> tuple[Figure, Figure]:
    bodies, span_count = _encode_bodies(sizes.otlp_traces)
    traces = sizes.otlp_traces
    counter = itertools.count()

    def receiver_run() -> float:
        settings = _settings(workdir / f"otlp-{next(counter)}.db")
        with runtime.open_store(settings) as sessions:
            pipeline = runtime.make_pipeline(settings, runtime.make_save(sessions), quiet_seconds=0)
            app = create_app(pipeline, settings.max_body_bytes, run_pipeline=True)
            with _server(app) as port:
                started = time.perf_counter()
                _post_all(port, bodies)
                pipeline.stop()  # joins the ticking thread, then saves what is still buffered
                seconds = time.perf_counter() - started
        _check(pipeline, settings, traces)
        return seconds

    trivial = Starlette(routes=[Route("/v1/traces", accept, methods=["POST"])])

    def trivial_run() -> float:
        with _server(trivial) as port:
            started = time.perf_counter()
            _post_all(port, bodies)
            return time.perf_counter() - started

    seconds, baseline = alternate(sizes.repetitions, receiver_run, trivial_run)
    name = f"OTLP/HTTP receiver ({TRACES_PER_REQUEST} traces/request) → SQLite"
    baseline_name = "same requests → bare Starlette 200"
    return (
        Figure(
            name,
            "spans/s",
            tuple(span_count / s for s in seconds),
            baseline_name,
            tuple(span_count / s for s in baseline),
            higher_is_better=True,
        ),
        Figure(
            name,
            "traces/s",
            tuple(traces / s for s in seconds),
            baseline_name,
            tuple(traces / s for s in baseline),
            higher_is_better=True,
        ),
    )


# 3. The offline judge.


def _judge_items(count: int) -> list[tuple[str, list[str], str]]:
    """(question, chunk texts, answer) as the demo app produces them, without the shim."""
    rng = random.Random(SEED)
    items = []
    for _ in range(count):
        request = demo.make_request(rng, NEW_MODEL_SHARE)
        chunks = demo.retrieve(request.question)
        answer = demo.generate(request, chunks, rng)
        items.append((request.question, [str(c["text"]) for c in chunks], answer))
    return items


def bench_judge(sizes: Sizes) -> Figure:
    items = _judge_items(sizes.judge_items)
    judge = OfflineJudge()
    for question, chunks, answer in items[:50]:  # warm the regular expressions
        judge.judge(question, chunks, answer)

    def judge_run() -> float:
        started = time.perf_counter()
        for question, chunks, answer in items:
            judge.judge(question, chunks, answer)
        return len(items) / (time.perf_counter() - started)

    def split_run() -> float:
        started = time.perf_counter()
        for _, chunks, answer in items:
            judge_text.sentences(answer)
            for chunk in chunks:
                judge_text.sentences(chunk)
        return len(items) / (time.perf_counter() - started)

    samples, baseline = alternate(sizes.repetitions, judge_run, split_run)
    return Figure(
        "offline judge on the demo's answers",
        "judgements/s",
        samples,
        "splitting answer and chunks into sentences",
        baseline,
        higher_is_better=True,
    )


# 4. The shim's cost per request.


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


def bench_span(sizes: Sizes) -> Figure:
    chunks = _chunks()
    question = "How long do refunds take to reach my payment method?"
    answer = "Refunds are sent to the original payment method within 5 business days."
    iterations = sizes.span_iterations

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
            sizes.repetitions, lambda: rag_spans(iterations), lambda: bare_spans(iterations)
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


# Output.


def render(figures: Sequence[Figure], header: str) -> str:
    demo_figure = figures[0]
    added_ms = (1 / demo_figure.value - 1 / demo_figure.baseline_value) * 1000
    notes = [
        "ratio = value / baseline value (throughput: below 1 is slower; µs: above 1 costs more)",
        f"ingest + scrub + store add {added_ms:.2f} ms per trace in process",
    ]
    return common_render(figures, header, notes)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="small sizes: a few seconds")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    sizes = QUICK if args.quick else FULL

    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="faithmon-bench-") as tmp:
        workdir = Path(tmp)
        figures = [bench_demo(sizes, workdir), *bench_otlp(sizes, workdir)]
    figures += [bench_judge(sizes), bench_span(sizes)]
    elapsed = time.perf_counter() - started

    header = (
        f"faithmon bench ({'quick' if args.quick else 'full'}): Python "
        f"{platform.python_version()} on {platform.machine()}, "
        f"median of {sizes.repetitions} runs, {elapsed:.1f}s in all"
    )
    print(render(figures, header))

    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    report = {
        "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "mode": "quick" if args.quick else "full",
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpus": cpus(),
        "seconds": elapsed,
        "sizes": {
            "repetitions": sizes.repetitions,
            "demo_traces": sizes.demo_traces,
            "otlp_traces": sizes.otlp_traces,
            "otlp_traces_per_request": TRACES_PER_REQUEST,
            "judge_items": sizes.judge_items,
            "span_iterations": sizes.span_iterations,
        },
        "figures": [f.as_json() for f in figures],
    }
    RESULTS.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"\nwrote {relative(RESULTS)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
