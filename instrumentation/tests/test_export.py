"""Export through a collector outage: retries, the queue, dropped-span warnings, shutdown.

A stdlib HTTP server on 127.0.0.1 plays the collector: it answers 503 (with
Retry-After) or 400 while told to, then 200. Only OpenTelemetry and
faithmon_instrumentation are imported here, never faithmon.
"""

from __future__ import annotations

import http.server
import logging
import os
import re
import socket
import threading
import time
from collections.abc import Callable, Iterator

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)

import faithmon_instrumentation as fm
from faithmon_instrumentation import _export, _log

DROPPED = re.compile(r"dropped (\d+) spans?: ")


@pytest.fixture(autouse=True)
def clean_environ(monkeypatch: pytest.MonkeyPatch) -> None:
    """No developer OTEL_* settings; spans leave the queue at once; retries wait briefly."""
    for name in list(os.environ):
        if name.startswith("OTEL_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("OTEL_BSP_SCHEDULE_DELAY", "50")
    monkeypatch.setattr(_export, "BACKOFF_SECONDS", (0.05, 0.2))


@pytest.fixture(autouse=True)
def released_provider() -> Iterator[None]:
    fm.shutdown()
    _log.reset()
    yield
    fm.shutdown()


class Collector:
    """What the fake collector answers, and what it has received."""

    def __init__(self) -> None:
        self.status = 200
        self.retry_after: str | None = None
        self.down_until = 0.0
        """While time.monotonic() is below this, answer ``status``; 200 afterwards."""
        self.requests = 0
        self.trace_ids: list[str] = []
        self.lock = threading.Lock()

    def refuse_for(self, seconds: float, status: int = 503, retry_after: str | None = "1") -> None:
        self.status, self.retry_after = status, retry_after
        self.down_until = time.monotonic() + seconds

    def spans(self) -> int:
        with self.lock:
            return len(self.trace_ids)


def serve(collector: Collector, port: int = 0) -> http.server.ThreadingHTTPServer:
    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers["Content-Length"]))
            with collector.lock:
                collector.requests += 1
            if time.monotonic() < collector.down_until:
                self.send_response(collector.status)
                if collector.retry_after is not None:
                    self.send_header("Retry-After", collector.retry_after)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            request = ExportTraceServiceRequest.FromString(body)
            with collector.lock:
                collector.trace_ids.extend(
                    span.trace_id.hex()
                    for resource_spans in request.resource_spans
                    for scope_spans in resource_spans.scope_spans
                    for span in scope_spans.spans
                )
            reply = ExportTraceServiceResponse().SerializeToString()
            self.send_response(200)
            self.send_header("Content-Type", "application/x-protobuf")
            self.send_header("Content-Length", str(len(reply)))
            self.end_headers()
            self.wfile.write(reply)

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", port), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


@pytest.fixture
def collector() -> Iterator[tuple[str, Collector]]:
    state = Collector()
    server = serve(state)
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", state
    finally:
        fm.shutdown()
        server.shutdown()
        server.server_close()


def wait_for(condition: Callable[[], bool], timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


def send(count: int) -> set[str]:
    """``count`` requests of three spans each (request, retrieval, generation)."""
    trace_ids = set()
    for n in range(count):
        with fm.rag_span(f"question {n}") as rag:
            rag.record_retrieval([f"chunk {n}"])
            rag.record_answer(f"answer {n}")
        trace_ids.add(rag.trace_id)
    return trace_ids


def drop_counts(caplog: pytest.LogCaptureFixture) -> list[int]:
    return [
        int(match[1])
        for record in caplog.records
        if record.name == "faithmon_instrumentation"
        and (match := DROPPED.search(record.getMessage()))
    ]


@pytest.mark.parametrize("retry_after", ["1", "0"])
def test_an_outage_with_retry_after_loses_nothing(
    collector: tuple[str, Collector], caplog: pytest.LogCaptureFixture, retry_after: str
) -> None:
    """Spans sent before and during 3 s of 503 + Retry-After all arrive once it ends."""
    endpoint, state = collector
    state.refuse_for(3.0, retry_after=retry_after)
    fm.setup(endpoint=endpoint)
    with caplog.at_level(logging.WARNING, logger="faithmon_instrumentation"):
        sent = send(20)
        wait_for(lambda: state.requests > 0)
        sent |= send(20)
        wait_for(lambda: state.spans() >= 3 * len(sent))

    assert state.requests > 1
    assert set(state.trace_ids) == sent and len(state.trace_ids) == 3 * len(sent)
    assert drop_counts(caplog) == []


def test_a_refused_connection_outage_loses_nothing(caplog: pytest.LogCaptureFixture) -> None:
    """Spans sent while nothing listens on the port arrive once a collector starts there."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    fm.setup(endpoint=f"http://127.0.0.1:{port}")
    state = Collector()
    with caplog.at_level(logging.WARNING):
        sent = send(10)
        wait_for(lambda: any("Transient error" in r.getMessage() for r in caplog.records))
        server = serve(state, port)
        try:
            wait_for(lambda: state.spans() >= 30)
        finally:
            fm.shutdown()
            server.shutdown()
            server.server_close()

    assert set(state.trace_ids) == sent and len(state.trace_ids) == 30
    assert drop_counts(caplog) == []


def test_dropped_spans_are_counted_in_one_warning(
    collector: tuple[str, Collector],
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A tiny queue and a 2 s retry window lose every span, and the warnings count them all."""
    endpoint, state = collector
    monkeypatch.setenv("OTEL_BSP_MAX_QUEUE_SIZE", "6")
    monkeypatch.setenv("OTEL_BSP_MAX_EXPORT_BATCH_SIZE", "3")
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "2")
    state.refuse_for(3600, retry_after="0")
    fm.setup(endpoint=endpoint)
    with caplog.at_level(logging.WARNING, logger="faithmon_instrumentation"):
        send(1)  # the worker takes these three and retries them
        wait_for(lambda: state.requests > 0)
        send(10)  # six fit the queue, 24 do not
        fm.shutdown()

    counts = drop_counts(caplog)
    assert sum(counts) == 33
    assert len(counts) == 2  # the first drop at once, the rest summed up at shutdown
    text = caplog.text
    assert "the export queue of 6 spans was full" in text
    # Whether the 2 s window ran out before shutdown came depends on the machine's load;
    # either way the warning names the collector that was unavailable.
    assert f"the collector at {endpoint}/v1/traces was unavailable" in text
    assert state.spans() == 0


def test_a_refusal_is_not_retried(
    collector: tuple[str, Collector], caplog: pytest.LogCaptureFixture
) -> None:
    """A 400 is final by the OTLP spec: one request, and a warning that names it."""
    endpoint, state = collector
    state.refuse_for(3600, status=400, retry_after=None)
    fm.setup(endpoint=endpoint)
    with caplog.at_level(logging.WARNING, logger="faithmon_instrumentation"):
        send(1)
        assert fm.flush() is False

    assert state.requests == 1
    assert drop_counts(caplog) == [3]
    assert f"the collector at {endpoint}/v1/traces refused them (HTTP 400)" in caplog.text


def test_shutdown_during_an_outage_is_prompt(
    collector: tuple[str, Collector], caplog: pytest.LogCaptureFixture
) -> None:
    """Shutdown gives up on a batch under retry at once, and says how many spans it lost."""
    endpoint, state = collector
    state.refuse_for(3600, retry_after="1")
    fm.setup(endpoint=endpoint)
    with caplog.at_level(logging.WARNING, logger="faithmon_instrumentation"):
        send(2)
        wait_for(lambda: state.requests > 0)
        started = time.monotonic()
        fm.shutdown()
        elapsed = time.monotonic() - started

    # Given up because shutdown came, not because the retry window ran out.
    assert "shutdown came while" in caplog.text
    assert elapsed < _export.RETRY_WINDOW_SECONDS
    assert sum(drop_counts(caplog)) == 6


def test_flush_waits_no_longer_than_its_timeout(collector: tuple[str, Collector]) -> None:
    """During an outage flush() returns False after its timeout; the spans stay queued."""
    endpoint, state = collector
    state.refuse_for(2.0, retry_after="0")
    fm.setup(endpoint=endpoint)
    sent = send(2)
    # False: it returned at its timeout, before the outage ended and the spans went out.
    assert fm.flush(timeout_millis=200) is False
    wait_for(lambda: state.spans() >= 6)
    assert set(state.trace_ids) == sent
    assert fm.flush() is True


def test_queue_size_and_retry_window_defaults_and_variables(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """The queue holds 65,536 spans unless OTEL_BSP_MAX_QUEUE_SIZE says otherwise."""

    def queue_size() -> int:
        processor = _export.export_processor("http://127.0.0.1:9")
        try:
            return processor.max_queue_size
        finally:
            processor.shutdown()

    assert queue_size() == 65_536
    monkeypatch.setenv("OTEL_BSP_MAX_QUEUE_SIZE", "100")
    assert queue_size() == 100
    monkeypatch.setenv("OTEL_BSP_MAX_QUEUE_SIZE", "lots")
    with caplog.at_level(logging.WARNING):
        assert queue_size() == 65_536
    assert "OTEL_BSP_MAX_QUEUE_SIZE='lots' is not a positive number" in caplog.text
