"""The receiver does bounded work per request: gzip members, nesting, slow bodies, keep-alive."""

from __future__ import annotations

import gzip
import json
import logging
import math
import socket
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any

import pytest
from google.rpc import status_pb2

from faithmon.api import server as serving
from faithmon.api.app import create_app
from faithmon.ingest.http import (
    KEEP_ALIVE_SECONDS,
    MAX_GZIP_MEMBERS,
    RETRY_AFTER_SECONDS,
    _inflate,
)
from faithmon.ingest.pipeline import Pipeline
from faithmon.ingest.sampler import KeepAll
from faithmon.ingest.scrub import identity
from faithmon.model import RagRecord
from tests.ingest.factory import PROTOBUF, post, rag_body
from tests.servers import serve_in_thread
from tests.timing import wait_for

SECRET = "SECRET-91c2"
IDS = {"traceId": "01" * 16, "spanId": "02" * 8}


@pytest.fixture
def records() -> list[RagRecord]:
    """Where the pipeline saves: a list in memory."""
    return []


@pytest.fixture
def pipeline(records: list[RagRecord]) -> Pipeline:
    """A pipeline saving to ``records``."""
    return Pipeline(records.extend, sampler=KeepAll(), scrubber=identity, quiet_seconds=0)


@pytest.fixture
def receiver(pipeline: Pipeline) -> Iterator[str]:
    """The receiver with a 1 MB body limit and a 0.5 s idle / 1.5 s total body timeout."""
    app = create_app(
        pipeline, max_body_bytes=1_000_000, body_idle_seconds=0.5, body_deadline_seconds=1.5
    )
    with serve_in_thread(app) as url:
        yield url


def address(url: str) -> tuple[str, int]:
    host, port = url.removeprefix("http://").split(":")
    return host, int(port)


@dataclass
class RawReply:
    status: int
    headers: dict[str, str]
    body: bytes
    closed: bool


def read_reply(sock: socket.socket, wait_close: float = 1.0) -> RawReply:
    """One HTTP/1.1 reply from ``sock``, and whether the server then closed the connection."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            raise AssertionError(f"connection closed before a reply: {data!r}")
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    status_line, *lines = head.decode("latin-1").split("\r\n")
    headers = {k.strip().lower(): v.strip() for k, v in (line.split(":", 1) for line in lines)}
    length = int(headers.get("content-length", "0"))
    while len(body) < length:
        body += sock.recv(65536)
    sock.settimeout(wait_close)
    try:
        closed = sock.recv(1) == b""
    except TimeoutError:
        closed = False
    return RawReply(int(status_line.split()[1]), headers, body, closed)


def request_head(length: int, content_type: str = PROTOBUF) -> bytes:
    return (
        f"POST /v1/traces HTTP/1.1\r\nHost: test\r\nContent-Type: {content_type}\r\n"
        f"Content-Length: {length}\r\n\r\n"
    ).encode()


def healthz(url: str) -> int:
    host, port = address(url)
    with socket.create_connection((host, port), timeout=5) as sock:
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n")
        return read_reply(sock).status


# Item 1: gzip in linear time, with a cap on members.


def _inflate_cpu_seconds(members: int) -> float:
    """The least CPU time of three inflations of ``members`` empty gzip members."""
    body = gzip.compress(b"") * members
    best = math.inf
    for _ in range(3):
        started = time.process_time()
        assert _inflate(body, "gzip", 1_000_000, max_members=10**9) == b""
        best = min(best, time.process_time() - started)
    return best


def test_many_gzip_members_cost_linear_time() -> None:
    """Twice the members cost about twice the time, not four times (a quadratic inflate
    took 40 s on 200,000): complexity as a ratio, which a busy machine does not skew."""
    ratio = _inflate_cpu_seconds(200_000) / _inflate_cpu_seconds(100_000)
    assert ratio < 3, f"200,000 members cost {ratio:.1f} times 100,000"


def test_more_gzip_members_than_the_cap_get_413(receiver: str) -> None:
    """A body of more than MAX_GZIP_MEMBERS members gets 413 at once, and /healthz still answers."""
    body = gzip.compress(b"") * (MAX_GZIP_MEMBERS + 1)
    status, reply, _ = post(receiver, body, {"Content-Type": PROTOBUF, "Content-Encoding": "gzip"})
    assert status == 413
    assert "gzip members" in status_pb2.Status.FromString(reply).message
    assert healthz(receiver) == 200


def test_members_up_to_the_cap_are_all_read(receiver: str, pipeline: Pipeline) -> None:
    """A body of exactly MAX_GZIP_MEMBERS members (one real, the rest empty) is accepted."""
    body = gzip.compress(rag_body("many members")) + gzip.compress(b"") * (MAX_GZIP_MEMBERS - 1)
    status, _, _ = post(receiver, body, {"Content-Type": PROTOBUF, "Content-Encoding": "gzip"})
    assert status == 200


def test_declared_length_over_the_limit_gets_413_before_the_body(receiver: str) -> None:
    """A Content-Length over the limit is refused before the body is read."""
    with socket.create_connection(address(receiver), timeout=5) as sock:
        sock.sendall(request_head(5_000_000) + b"\x00" * 1000)
        reply = read_reply(sock, wait_close=0.2)
    assert reply.status == 413
    # Open, so a client still sending reads the 413 instead of a broken pipe.
    assert not reply.closed


# Item 2: hostile JSON answers 400 with a google.rpc.Status, never 500.


@pytest.mark.parametrize(
    "body",
    [b"[" * 100_000, b'{"resourceSpans": [' * 30_000, b'{"resourceSpans": [' * 300 + b"]}" * 300],
    ids=["100k-brackets", "deep-objects", "deep-but-closed"],
)
def test_hostile_json_gets_400_in_json(receiver: str, body: bytes) -> None:
    """Deep nesting is bad data: 400 with a JSON google.rpc.Status."""
    status, reply, headers = post(receiver, body, {"Content-Type": "application/json"})
    assert status == 400
    assert headers["content-type"] == "application/json"
    assert json.loads(reply)["message"].startswith("not an OTLP")
    assert healthz(receiver) == 200


@pytest.mark.parametrize(
    "body",
    [
        b'{"resourceSpans": [{"\\ud800": 1}]}',
        json.dumps(
            {"resourceSpans": [{"scopeSpans": [{"spans": [{**IDS, "name": "\ud800"}]}]}]}
        ).encode(),
        b'{"\\udfff": {"\\ud800": "\\udc00"}}',
    ],
    ids=["surrogate-key", "surrogate-value", "surrogates"],
)
def test_lone_surrogates_are_repaired_not_refused(receiver: str, body: bytes) -> None:
    """Lone surrogates are valid JSON that protobuf cannot hold: repaired, and 200 in JSON."""
    status, reply, headers = post(receiver, body, {"Content-Type": "application/json"})
    assert status == 200
    assert headers["content-type"] == "application/json"
    assert json.loads(reply) == {}


# Item 3: a body that stops arriving gets 408 and the connection is closed.


def test_body_shorter_than_its_length_gets_408(receiver: str) -> None:
    """Headers and 10 of 1,000 bytes, then silence: 408 after the idle timeout, then close."""
    with socket.create_connection(address(receiver), timeout=5) as sock:
        started = time.monotonic()
        sock.sendall(request_head(1000) + b"\x0a" * 10)
        reply = read_reply(sock)
        elapsed = time.monotonic() - started
    assert reply.status == 408
    assert elapsed > 0.4  # after the idle timeout, not at once
    assert status_pb2.Status.FromString(reply.body).message == "request body timed out"
    assert reply.headers["connection"] == "close" and reply.closed
    assert healthz(receiver) == 200


def test_a_trickling_body_meets_the_deadline(receiver: str) -> None:
    """A byte every 0.2 s never trips the idle timeout but gets 408 at the 1.5 s deadline."""
    with socket.create_connection(address(receiver), timeout=5) as sock:
        started = time.monotonic()
        sock.sendall(request_head(1000))
        sock.settimeout(0.2)
        reply_data = b""
        for _ in range(30):
            try:
                sock.sendall(b"\x0a")
                reply_data = sock.recv(65536)
            except TimeoutError:
                continue
            except OSError:
                break
            if reply_data:
                break
        elapsed = time.monotonic() - started
    assert reply_data.startswith(b"HTTP/1.1 408")
    assert elapsed > 1.3  # at the deadline: the trickle kept the idle timeout away


# Item 4: Retry-After outlasts the keep-alive, which the server sets itself.


def serve_as_in_production(app: Any) -> AbstractContextManager[str]:
    """``app`` under uvicorn with faithmon's own settings (serving.config), on 127.0.0.1."""
    return serve_in_thread(app, serving.config)


def test_retry_after_outlasts_the_keep_alive(records: list[RagRecord]) -> None:
    """A 503's Retry-After is longer than the idle time after which the server closes."""

    def down(batch: object) -> None:
        raise ConnectionError("database is down")

    failing = Pipeline(down, sampler=KeepAll(), scrubber=identity, quiet_seconds=0)
    with serve_as_in_production(create_app(failing)) as url:
        assert post(url, rag_body(), {"Content-Type": PROTOBUF})[0] == 200
        failing.flush_all()  # the save fails: the pipeline holds a backlog and says saturated
        with socket.create_connection(address(url), timeout=5) as sock:
            body = rag_body()
            sock.sendall(request_head(len(body)) + body)
            started = time.monotonic()
            reply = read_reply(sock, wait_close=KEEP_ALIVE_SECONDS + 3)
            idle = time.monotonic() - started
    assert reply.status == 503
    retry_after = float(reply.headers["retry-after"])
    assert retry_after == float(RETRY_AFTER_SECONDS) > KEEP_ALIVE_SECONDS
    # The server closed the idle connection itself, a clear margin before Retry-After.
    assert reply.closed
    assert KEEP_ALIVE_SECONDS - 1 < idle < retry_after - 1


# Item 6: log lines never carry the body.


def test_rejections_are_logged_without_the_values(
    receiver: str, caplog: pytest.LogCaptureFixture
) -> None:
    """A bad id, a bad value and a bad encoding are logged by field and length only."""
    spans = [
        {"traceId": SECRET, "spanId": "01" * 8},
        {"traceId": "01" * 16, "spanId": "01" * 8, "startTimeUnixNano": SECRET},
    ]
    caplog.set_level(logging.INFO, logger="faithmon")
    for span in spans:
        document = {"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]}
        status, reply, _ = post(
            receiver, json.dumps(document).encode(), {"Content-Type": "application/json"}
        )
        assert status == 400 and SECRET not in reply.decode()
    headers = {"Content-Type": PROTOBUF, "Content-Encoding": SECRET * 10}
    status, reply, _ = post(receiver, b"x", headers)
    assert status == 400 and SECRET not in reply.decode("latin-1")
    assert len(caplog.records) == 3
    assert all(SECRET not in record.getMessage() for record in caplog.records)


def test_the_listening_socket_lets_asyncio_set_no_delay() -> None:
    """asyncio sets TCP_NODELAY on accepted connections only for a socket made with
    IPPROTO_TCP (protocol 0 leaves every kept-alive reply waiting ~40 ms on a delayed
    ACK): faithmon's listening socket is, and so is each connection it accepts."""
    sock = serving.listen("127.0.0.1", 0)
    try:
        sock.listen(1)
        assert sock.proto == socket.IPPROTO_TCP
        with socket.create_connection(sock.getsockname()[:2], timeout=5):
            accepted, _ = sock.accept()
            with accepted:
                assert accepted.proto == socket.IPPROTO_TCP
    finally:
        sock.close()


def test_a_client_gone_mid_body_is_one_line_without_a_traceback(
    receiver: str, caplog: pytest.LogCaptureFixture
) -> None:
    """A client that closes its connection halfway through a body leaves one log line
    saying so, no traceback, and the receiver keeps serving."""
    caplog.set_level(logging.INFO)
    body = rag_body()
    with socket.create_connection(address(receiver), timeout=5) as sock:
        sock.sendall(request_head(len(body) * 4) + body)
    wait_for(lambda: any("went away" in r.getMessage() for r in caplog.records), 30, "the log line")
    assert not any(r.exc_info for r in caplog.records), [r.getMessage() for r in caplog.records]
    assert healthz(receiver) == 200


def test_an_export_that_could_never_fit_is_413_not_503(records: list[RagRecord]) -> None:
    """An export opening more traces than the assembler may ever hold gets 413 naming the
    remedy (smaller batches), not a 503 its exporter would retry with the same batch
    forever; an export that fits is taken."""
    small = Pipeline(
        records.extend, sampler=KeepAll(), scrubber=identity, quiet_seconds=0, max_traces=100
    )

    def roots(first: int, count: int) -> bytes:
        spans = [
            {"traceId": f"{n:032x}", "spanId": f"{n:016x}", "name": "r", "startTimeUnixNano": "1"}
            for n in range(first, first + count)
        ]
        body = {"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}
        return json.dumps(body).encode()

    with serve_in_thread(create_app(small, max_body_bytes=1_000_000)) as url:
        headers = {"Content-Type": "application/json"}
        status, answer, _ = post(url, roots(1, 91), headers)
        assert status == 413
        assert b"send smaller batches" in answer and b"91 traces" in answer
        status, _, _ = post(url, roots(1000, 90), headers)
        assert status == 200
