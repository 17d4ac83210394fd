"""Figures 1-3 of ``bench/run.py``, all on the demo app's traffic: the app through the
in-process pipeline, its traces through the OTLP/HTTP receiver, and the offline judge
on its answers. Each figure's baseline is measured in turn with it."""

from __future__ import annotations

import http.client
import itertools
import random
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from common import PROTOBUF, SCRUB_KEY, Figure, accept, alternate, by_trace, encode_bodies
from loopback import serve_in_thread
from opentelemetry.sdk.trace import SpanProcessor
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from starlette.applications import Starlette
from starlette.routing import Route

import faithmon_instrumentation as fm
from faithmon.api.app import create_app
from faithmon.cli import wiring
from faithmon.config import Settings
from faithmon.demo import app as demo
from faithmon.ingest.pipeline import Pipeline
from faithmon.ingest.processor import PipelineSpanProcessor
from faithmon.judge import OfflineJudge
from faithmon.judge import text as judge_text
from faithmon.store import records as stored_records

SERVICE = "northwind-help"
SEED = 7
# The demo's second half: 40% of traffic on the model that invents facts.
NEW_MODEL_SHARE = 0.4
# The in-process pipeline builds and saves records every this many traces, as a tick would.
FLUSH_EVERY = 100
# Traces per OTLP request body (3 spans each), like a BatchSpanProcessor export.
TRACES_PER_REQUEST = 20


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
    with wiring.open_store(settings, upgrade=False) as sessions, sessions() as session:
        return sum(stored_records.counts_by_status(session).values())


def _check(pipeline: Pipeline, settings: Settings, traces: int) -> None:
    """A figure only counts when every trace became a stored record."""
    stored = _stored(settings)
    if pipeline.stats["records"] != traces or stored != traces:
        raise RuntimeError(
            f"expected {traces} records, pipeline saved {pipeline.stats['records']} "
            f"and the store holds {stored} ({dict(pipeline.stats)})"
        )


# 1. The demo app through the in-process pipeline.


def bench_demo(repetitions: int, traces: int, workdir: Path) -> Figure:
    requests = _requests(traces)
    counter = itertools.count()

    def pipeline_run() -> float:
        settings = _settings(workdir / f"demo-{next(counter)}.db")
        with wiring.open_store(settings) as sessions:
            pipeline = wiring.make_pipeline(settings, wiring.make_save(sessions), quiet_seconds=0)
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

    samples, baseline = alternate(repetitions, pipeline_run, discard_run)
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


def bench_otlp(repetitions: int, traces: int, workdir: Path) -> tuple[Figure, Figure]:
    bodies, span_count = _encode_bodies(traces)
    counter = itertools.count()

    def receiver_run() -> float:
        settings = _settings(workdir / f"otlp-{next(counter)}.db")
        with wiring.open_store(settings) as sessions:
            pipeline = wiring.make_pipeline(settings, wiring.make_save(sessions), quiet_seconds=0)
            app = create_app(pipeline, settings.max_body_bytes, run_pipeline=True)
            with serve_in_thread(app, lifespan="on") as port:
                started = time.perf_counter()
                _post_all(port, bodies)
                pipeline.stop()  # joins the ticking thread, then saves what is still buffered
                seconds = time.perf_counter() - started
        _check(pipeline, settings, traces)
        return seconds

    trivial = Starlette(routes=[Route("/v1/traces", accept, methods=["POST"])])

    def trivial_run() -> float:
        with serve_in_thread(trivial, lifespan="on") as port:
            started = time.perf_counter()
            _post_all(port, bodies)
            return time.perf_counter() - started

    seconds, baseline = alternate(repetitions, receiver_run, trivial_run)
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


def bench_judge(repetitions: int, count: int) -> Figure:
    items = _judge_items(count)
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

    samples, baseline = alternate(repetitions, judge_run, split_run)
    return Figure(
        "offline judge on the demo's answers",
        "judgements/s",
        samples,
        "splitting answer and chunks into sentences",
        baseline,
        higher_is_better=True,
    )
