"""The durability bench's second run: SIGKILL of the receiver under load, then a
restart on the same spool folder."""

from __future__ import annotations

import http.client
import os
import signal
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

from common import PROTOBUF, postgres_database
from durability_setup import (
    ANSWER,
    STORE_DEADLINE,
    Sizes,
    Watch,
    counts,
    log_summary,
    serve_command,
    server_env,
    spool_bytes,
    stored_ids,
    upgrade,
)
from loopback import free_port, serve
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from sqlalchemy import Engine, create_engine
from sqlalchemy.pool import NullPool

MAX_ACKNOWLEDGED = 100_000  # the load stops here even if the clock has not run out


def template_body() -> tuple[bytes, bytes]:
    """One OpenInference RAG trace (root + retriever) encoded by the real SDK, and its
    trace id's 16 bytes, which each request replaces with a fresh id."""
    memory = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource({"service.name": "durability-bench"}))
    provider.add_span_processor(SimpleSpanProcessor(memory))
    tracer = provider.get_tracer("durability-bench")
    root_attributes = {
        "openinference.span.kind": "CHAIN",
        "input.value": "Where is order A17?",
        "output.value": ANSWER,
    }
    with tracer.start_as_current_span("rag.request", attributes=root_attributes) as root:
        retrieval = {
            "openinference.span.kind": "RETRIEVER",
            "retrieval.documents.0.document.content": ANSWER,
        }
        with tracer.start_as_current_span("rag.retrieve", attributes=retrieval):
            pass
    marker = root.get_span_context().trace_id.to_bytes(16, "big")
    body = encode_spans(memory.get_finished_spans()).SerializeToString()
    provider.shutdown()
    if body.count(marker) != 2:
        raise RuntimeError("the template's trace id is not where expected")
    return body, marker


class Load:
    """Two threads POSTing one trace per request on keep-alive connections until stopped."""

    def __init__(self, port: int) -> None:
        self._port = port
        self._body, self._marker = template_body()
        self.acknowledged: set[str] = set()
        self.answers: Counter[str] = Counter()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._threads = [threading.Thread(target=self._client, daemon=True) for _ in range(2)]
        for thread in self._threads:
            thread.start()

    def _client(self) -> None:
        connection = http.client.HTTPConnection("127.0.0.1", self._port, timeout=30)
        while not self._stop.is_set() and len(self.acknowledged) < MAX_ACKNOWLEDGED:
            trace_id = os.urandom(16)
            body = self._body.replace(self._marker, trace_id)
            try:
                connection.request("POST", "/v1/traces", body, {"Content-Type": PROTOBUF})
                response = connection.getresponse()
                response.read()
                answer = str(response.status)
            except OSError as exc:  # killed mid-request: not acknowledged
                answer = type(exc).__name__
                connection.close()
                connection = http.client.HTTPConnection("127.0.0.1", self._port, timeout=30)
                self._stop.wait(0.01)
            with self._lock:
                self.answers[answer] += 1
                if answer == "200":
                    self.acknowledged.add(trace_id.hex())
        connection.close()

    def stop(self) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join(timeout=60)


def run_kill(admin: Engine, sizes: Sizes, spooled: bool, workdir: Path) -> dict[str, Any]:
    tag = "spool" if spooled else "no-spool"
    spool = workdir / f"kill-{tag}"
    with postgres_database(admin) as url:
        upgrade(url)
        env = server_env(url, str(spool) if spooled else "")
        engine = create_engine(url, poolclass=NullPool)
        port = free_port()
        log = workdir / f"kill-{tag}-1.log"
        with serve(f"faithmon serve (kill, {tag})", serve_command(port), env, port, log) as first:
            load = Load(port)
            started = time.perf_counter()
            while time.perf_counter() - started < sizes.load_seconds and load.answers.total() < (
                MAX_ACKNOWLEDGED
            ):
                time.sleep(0.05)
            first_rss = first.peak_rss_mib()
            first.process.send_signal(signal.SIGKILL)
            first.process.wait(timeout=30)
            load_seconds = time.perf_counter() - started
            load.stop()
        before = counts(engine)[0]
        left_in_spool = spool_bytes(spool) if spooled else 0
        port = free_port()
        log2 = workdir / f"kill-{tag}-2.log"
        watch = Watch(engine, spool if spooled else None)
        spawned = watch.now()
        with serve(f"faithmon serve (restart, {tag})", serve_command(port), env, port, log2) as s:
            ready = watch.now()
            acknowledged = len(load.acknowledged)
            watch.wait_stable(lambda rows: False, STORE_DEADLINE)
            second_rss = s.peak_rss_mib()
        watch.stop()
        rows, distinct = counts(engine)
        ids = stored_ids(engine)
        engine.dispose()
    missing = sorted(load.acknowledged - ids)
    last = watch.last_growth()
    return {
        "spool": spooled,
        "load_seconds": load_seconds,
        "answers": dict(load.answers),
        "acknowledged": acknowledged,
        "acknowledged_per_second": acknowledged / load_seconds,
        "stored_before_restart": before,
        "spool_bytes_at_restart": left_in_spool,
        "stored_after_restart": rows,
        "acknowledged_missing": len(missing),
        "missing_ids": missing[:20],
        "stored_not_acknowledged": len(ids - load.acknowledged),
        "duplicates": rows - distinct,
        "restart_to_ready_seconds": ready - spawned,
        "restart_to_replayed_seconds": max(last, ready) - spawned if rows > before else None,
        "peak_rss_mib": first_rss,
        "restarted_peak_rss_mib": second_rss,
        "log": log_summary(log),
        "restart_log": log_summary(log2),
    }
