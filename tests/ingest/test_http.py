"""The OTLP/HTTP receiver over a real socket."""

from __future__ import annotations

import gzip
import json
import zlib
from collections.abc import Iterator, Sequence

import pytest
from google.rpc import status_pb2
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)

from faithmon.api.app import create_app
from faithmon.ingest.http import RETRY_AFTER_SECONDS
from faithmon.ingest.pipeline import Pipeline
from faithmon.ingest.sampler import KeepAll
from faithmon.ingest.scrub import identity
from faithmon.model import RagRecord
from tests.ingest.factory import PROTOBUF, post, rag_body
from tests.servers import serve_in_thread


class FlakyStore:
    """A save() that can be switched off, as when the database goes down."""

    def __init__(self) -> None:
        self.records: list[RagRecord] = []
        self.down = False

    def __call__(self, records: Sequence[RagRecord]) -> None:
        if self.down:
            raise ConnectionError("database is down")
        self.records.extend(records)


@pytest.fixture
def store() -> FlakyStore:
    return FlakyStore()


@pytest.fixture
def pipeline(store: FlakyStore) -> Pipeline:
    return Pipeline(store, sampler=KeepAll(), scrubber=identity, quiet_seconds=0)


@pytest.fixture
def receiver(pipeline: Pipeline) -> Iterator[str]:
    with serve_in_thread(create_app(pipeline, max_body_bytes=200_000)) as url:
        yield url


def test_valid_export_is_accepted_and_assembled(
    receiver: str, pipeline: Pipeline, store: FlakyStore
) -> None:
    """A protobuf export gets 200 with an empty response and becomes one record."""
    status, body, headers = post(receiver, rag_body(), {"Content-Type": PROTOBUF})
    assert status == 200
    assert headers["content-type"] == PROTOBUF
    assert not ExportTraceServiceResponse.FromString(body).HasField("partial_success")
    pipeline.flush_all()
    [record] = store.records
    assert record.question == "Where is order A17?"
    assert [c.text for c in record.chunks] == ["Order A17 shipped."]


def test_gzip_body_is_inflated(receiver: str, pipeline: Pipeline, store: FlakyStore) -> None:
    """Content-Encoding: gzip is decoded before parsing."""
    body = gzip.compress(rag_body("gzipped?"))
    status, _, _ = post(receiver, body, {"Content-Type": PROTOBUF, "Content-Encoding": "gzip"})
    assert status == 200
    pipeline.flush_all()
    assert [r.question for r in store.records] == ["gzipped?"]


def test_malformed_body_gets_400_and_server_keeps_serving(
    receiver: str, pipeline: Pipeline, store: FlakyStore
) -> None:
    """Garbage gets 400 with a google.rpc.Status; the next valid export still lands."""
    status, body, _ = post(receiver, b"\xff\x00not protobuf", {"Content-Type": PROTOBUF})
    assert status == 400
    assert "not an OTLP" in status_pb2.Status.FromString(body).message
    status, _, _ = post(receiver, rag_body("still there?"), {"Content-Type": PROTOBUF})
    assert status == 200
    pipeline.flush_all()
    assert [r.question for r in store.records] == ["still there?"]


def test_unknown_content_type_gets_415(receiver: str) -> None:
    """Only OTLP protobuf is accepted on this port for now."""
    status, _, _ = post(receiver, b"<xml/>", {"Content-Type": "application/xml"})
    assert status == 415


def test_body_over_limit_gets_413_even_when_compressed(receiver: str) -> None:
    """The size limit applies after decompression: a small gzip bomb gets 413."""
    bomb = gzip.compress(b"\x00" * 1_000_000)
    assert len(bomb) < 200_000
    status, _, _ = post(receiver, bomb, {"Content-Type": PROTOBUF, "Content-Encoding": "gzip"})
    assert status == 413
    status, _, _ = post(receiver, b"\x00" * 300_000, {"Content-Type": PROTOBUF})
    assert status == 413


def test_database_down_gets_503_and_loses_nothing(
    receiver: str, pipeline: Pipeline, store: FlakyStore
) -> None:
    """While save fails the receiver answers 503 + Retry-After; held records land later."""
    store.down = True
    assert post(receiver, rag_body("first"), {"Content-Type": PROTOBUF})[0] == 200
    pipeline.flush_all()
    status, _, headers = post(receiver, rag_body("second"), {"Content-Type": PROTOBUF})
    assert status == 503
    assert headers["retry-after"] == RETRY_AFTER_SECONDS
    store.down = False
    pipeline.tick()
    assert [r.question for r in store.records] == ["first"]
    assert post(receiver, rag_body("second"), {"Content-Type": PROTOBUF})[0] == 200
    pipeline.flush_all()
    assert [r.question for r in store.records] == ["first", "second"]


def test_truncated_gzip_gets_400(receiver: str) -> None:
    """A gzip body cut before its end is bad data, not an empty export."""
    body = gzip.compress(rag_body())
    status, body_out, _ = post(
        receiver, body[:-12], {"Content-Type": PROTOBUF, "Content-Encoding": "gzip"}
    )
    assert status == 400
    assert "truncated gzip body" in status_pb2.Status.FromString(body_out).message


def test_every_gzip_member_is_read(receiver: str, pipeline: Pipeline, store: FlakyStore) -> None:
    """A body of two gzip members decodes as their concatenation (RFC 1952)."""
    first, second = rag_body("one"), rag_body("two")
    body = gzip.compress(first) + gzip.compress(second)
    status, _, _ = post(receiver, body, {"Content-Type": PROTOBUF, "Content-Encoding": "gzip"})
    assert status == 200
    pipeline.flush_all()
    assert sorted(r.question for r in store.records) == ["one", "two"]


def test_malformed_json_gets_400_in_json(receiver: str) -> None:
    """A JSON body that is not OTLP gets 400 with a JSON google.rpc.Status."""
    status, body, headers = post(
        receiver, b'{"resourceSpans": 7', {"Content-Type": "application/json"}
    )
    assert status == 400
    assert headers["content-type"] == "application/json"
    assert "not an OTLP" in json.loads(body)["message"]


def test_json_ids_of_the_wrong_length_get_400(receiver: str) -> None:
    """A hex traceId that is not 16 bytes is bad data, named by field, length and place."""
    document = {
        "resourceSpans": [
            {
                "scopeSpans": [
                    {"spans": [{"traceId": "abcd", "spanId": "0102030405060708", "name": "x"}]}
                ]
            }
        ]
    }
    status, body, _ = post(
        receiver, json.dumps(document).encode(), {"Content-Type": "application/json"}
    )
    assert status == 400
    message = json.loads(body)["message"]
    assert "traceId is not 16 bytes but 2 at resourceSpans[0].scopeSpans[0].spans[0]" in message
    assert "abcd" not in message


def test_protobuf_spans_without_valid_ids_are_rejected_in_part(
    receiver: str, pipeline: Pipeline, store: FlakyStore
) -> None:
    """Spans whose ids have the wrong length are counted in partial_success; the rest land."""
    request = ExportTraceServiceRequest.FromString(rag_body("partly"))
    bad = request.resource_spans[0].scope_spans[0].spans.add()
    bad.trace_id = b"\x01" * 8
    bad.span_id = b"\x02" * 8
    status, body, _ = post(receiver, request.SerializeToString(), {"Content-Type": PROTOBUF})
    assert status == 200
    partial = ExportTraceServiceResponse.FromString(body).partial_success
    assert (
        partial.rejected_spans == 1 and "without valid trace or span ids" in partial.error_message
    )
    pipeline.flush_all()
    assert [r.question for r in store.records] == ["partly"]


def test_deflate_body_is_inflated(receiver: str, pipeline: Pipeline, store: FlakyStore) -> None:
    """Content-Encoding: deflate (zlib) is decoded too."""
    body = zlib.compress(rag_body("deflated"))
    status, _, _ = post(receiver, body, {"Content-Type": PROTOBUF, "Content-Encoding": "deflate"})
    assert status == 200
    pipeline.flush_all()
    assert [r.question for r in store.records] == ["deflated"]


def test_full_buffer_gets_503(store: FlakyStore) -> None:
    """Past the bound on buffered spans the receiver answers 503 and keeps what it has."""
    pipeline = Pipeline(store, sampler=KeepAll(), scrubber=identity, quiet_seconds=60, max_items=3)
    with serve_in_thread(create_app(pipeline)) as url:
        assert post(url, rag_body("first"), {"Content-Type": PROTOBUF})[0] == 200
        status, _, headers = post(url, rag_body("second"), {"Content-Type": PROTOBUF})
        assert status == 503 and headers["retry-after"] == RETRY_AFTER_SECONDS
        pipeline.flush_all()
        assert post(url, rag_body("second"), {"Content-Type": PROTOBUF})[0] == 200
    pipeline.flush_all()
    assert [r.question for r in store.records] == ["first", "second"]
