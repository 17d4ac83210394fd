"""The fuzz bench's server and how the bench talks to it: ``create_app`` under
``server.serve`` in its own process, with a Pipeline whose save() counts records and
keeps nothing, and a ``/bench/stats`` route with the buffer's own count."""

from __future__ import annotations

import http.client
import json
from pathlib import Path
from typing import Any

from loopback import Server, clean_env
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

CHUNKS = 10

SERVER = """
import json, os, sys, threading, time
from starlette.responses import JSONResponse
from starlette.routing import Route
from faithmon.api import server as serving
from faithmon.api.app import create_app
from faithmon.ingest.pipeline import Pipeline
from faithmon.ingest.sampler import KeepAll
from faithmon.ingest.scrub import identity

saved = [0]
def save(records):  # counts and keeps nothing, as a store would not keep them in memory
    saved[0] += len(records)

max_mb = int(os.environ.get("FAITHMON_MAX_BUFFER_MB", "512"))
pipeline = Pipeline(save, sampler=KeepAll(), scrubber=identity, max_bytes=max_mb * 1024 * 1024)
peak = [0]
def watch():  # the bench reads the buffer's own count: a private, read only
    while True:
        peak[0] = max(peak[0], pipeline._assembler.bytes_in_flight)
        time.sleep(0.02)
threading.Thread(target=watch, daemon=True).start()

async def stats(request):
    return JSONResponse({"saved": saved[0], "peak_bytes_in_flight": peak[0],
                         "bytes_in_flight": pipeline._assembler.bytes_in_flight,
                         "trims": pipeline.memory.trims, "stats": dict(pipeline.stats)})

app = create_app(pipeline, int(sys.argv[2]), run_pipeline=True,
                 extra_routes=[Route("/bench/stats", stats)])
serving.serve(app, serving.listen("127.0.0.1", int(sys.argv[1])), pipeline)
"""


def server_env(**extra: str) -> dict[str, str]:
    """The server's environment: none of this process's FAITHMON_* settings, plus ``extra``."""
    return clean_env(("FAITHMON_",), **extra)


def rss_mib(pid: int, field_name: str) -> float:
    """``VmRSS`` or ``VmHWM`` of a process, in MiB (Linux)."""
    for line in Path(f"/proc/{pid}/status").read_text(encoding="utf-8").splitlines():
        if line.startswith(field_name + ":"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no {field_name} in /proc/{pid}/status")


def status_of(port: int, method: str, path: str, body: bytes = b"", **headers: str) -> int:
    """The status answered to one request on a connection of its own."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        connection.request(method, path, body=body, headers=headers)
        response = connection.getresponse()
        response.read()
        return response.status
    finally:
        connection.close()


def server_stats(server: Server) -> dict[str, Any]:
    """The server's ``/bench/stats``: records saved and the buffer's count, now and at peak."""
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    try:
        connection.request("GET", "/bench/stats")
        result: dict[str, Any] = json.loads(connection.getresponse().read())
        return result
    finally:
        connection.close()


def trace_body(trace_id: bytes, chunk_bytes: int) -> bytes:
    """One RAG trace (root + retriever) as OpenInference writes it, CHUNKS chunks."""
    request = ExportTraceServiceRequest()
    spans = request.resource_spans.add()
    spans.resource.attributes.add(key="service.name").value.string_value = "fuzz-bench"
    scope = spans.scope_spans.add()
    root = scope.spans.add(trace_id=trace_id, span_id=b"\x00" * 7 + b"\x01", name="rag.request")
    retrieve = scope.spans.add(
        trace_id=trace_id,
        span_id=b"\x00" * 7 + b"\x02",
        parent_span_id=root.span_id,
        name="retrieve",
    )
    for span, kind in ((root, "CHAIN"), (retrieve, "RETRIEVER")):
        span.start_time_unix_nano, span.end_time_unix_nano = 1, 2
        span.attributes.add(key="openinference.span.kind").value.string_value = kind
    root.attributes.add(key="input.value").value.string_value = "Where is order A17?"
    root.attributes.add(key="output.value").value.string_value = "It shipped."
    for i in range(CHUNKS):
        key = f"retrieval.documents.{i}.document.content"
        text = (f"Chunk {i} of the order history. " * (chunk_bytes // 30 + 1))[:chunk_bytes]
        retrieve.attributes.add(key=key).value.string_value = text
    body: bytes = request.SerializeToString()
    return body
