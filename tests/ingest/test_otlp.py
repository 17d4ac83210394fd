"""OTLP/HTTP protobuf decoding and replies, on bodies built by the OpenTelemetry SDK."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator

import pytest
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.common.v1.common_pb2 import AnyValue
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import Status, StatusCode

from faithmon.errors import DecodeError
from faithmon.ingest.otlp import JSON, decode_traces, export_response
from faithmon.ingest.spans import REPAIRED

HEX_32 = re.compile(r"^[0-9a-f]{32}$")
HEX_16 = re.compile(r"^[0-9a-f]{16}$")


@pytest.fixture
def span_exporter() -> InMemorySpanExporter:
    """An in-memory exporter that collects finished SDK spans."""
    return InMemorySpanExporter()


@pytest.fixture
def tracer_provider(span_exporter: InMemorySpanExporter) -> Iterator[TracerProvider]:
    """A local SDK provider (never the global one) with resource attributes."""
    provider = TracerProvider(
        resource=Resource.create({"service.name": "support-bot", "deployment.environment": "test"})
    )
    provider.add_span_processor(SimpleSpanProcessor(span_exporter))
    yield provider
    provider.shutdown()


@pytest.fixture
def request_body(tracer_provider: TracerProvider, span_exporter: InMemorySpanExporter) -> bytes:
    """A serialised ExportTraceServiceRequest with a root, a child and a failing child."""
    tracer = tracer_provider.get_tracer("tests")
    with tracer.start_as_current_span("root") as root:
        root.set_attributes(
            {
                "text": "hello",
                "count": 3,
                "ratio": 0.25,
                "flag": True,
                "tags": ["a", "b"],
                "numbers": [1, 2],
            }
        )
        with tracer.start_as_current_span("child"):
            pass
        with tracer.start_as_current_span("failing", record_exception=False) as failing:
            failing.set_status(Status(StatusCode.ERROR, "boom"))
    return encode_spans(span_exporter.get_finished_spans()).SerializeToString()


def test_decode_gives_lowercase_hex_ids_and_parents(
    request_body: bytes, span_exporter: InMemorySpanExporter
) -> None:
    """Trace ids are 32 and span ids 16 lowercase hex digits, and children point at the root."""
    spans, rejected = decode_traces(request_body)

    assert rejected == 0
    by_name = {span.name: span for span in spans}
    assert set(by_name) == {"root", "child", "failing"}
    sdk_root = next(s for s in span_exporter.get_finished_spans() if s.name == "root")
    root = by_name["root"]
    assert root.trace_id == f"{sdk_root.context.trace_id:032x}"
    assert root.span_id == f"{sdk_root.context.span_id:016x}"
    assert root.parent_span_id is None
    for span in spans:
        assert HEX_32.match(span.trace_id)
        assert HEX_16.match(span.span_id)
        assert span.trace_id == root.trace_id
    for name in ("child", "failing"):
        assert by_name[name].parent_span_id == root.span_id
        assert HEX_16.match(by_name[name].parent_span_id or "")


def test_decode_keeps_attribute_value_types(request_body: bytes) -> None:
    """String, int, float, bool and array attributes come back as Python values of that type."""
    spans, _ = decode_traces(request_body)

    root = next(span for span in spans if span.name == "root")
    expected = {
        "text": "hello",
        "count": 3,
        "ratio": 0.25,
        "flag": True,
        "tags": ["a", "b"],
        "numbers": [1, 2],
    }
    for key, value in expected.items():
        assert root.attributes[key] == value
        assert type(root.attributes[key]) is type(value)


def test_decode_carries_resource_attributes_times_and_error(request_body: bytes) -> None:
    """Each span carries its resource's attributes, its times and whether it failed."""
    spans, _ = decode_traces(request_body)

    by_name = {span.name: span for span in spans}
    for span in spans:
        assert span.resource["service.name"] == "support-bot"
        assert span.resource["deployment.environment"] == "test"
        assert 0 < span.start_ns <= span.end_ns
    assert by_name["failing"].error is True
    assert by_name["root"].error is False
    assert by_name["child"].error is False


def test_garbage_raises_decode_error() -> None:
    """Bytes that are not an ExportTraceServiceRequest raise faithmon's DecodeError."""
    with pytest.raises(DecodeError):
        decode_traces(b"\xff\xff\xff\xff not protobuf")


def test_empty_body_decodes_to_nothing() -> None:
    """An empty request body is a valid, empty export."""
    assert decode_traces(b"") == ([], 0)


def test_zero_trace_id_is_rejected(request_body: bytes) -> None:
    """A span with an all-zero trace id is counted as rejected, and the others are kept."""
    request = ExportTraceServiceRequest.FromString(request_body)
    request.resource_spans[0].scope_spans[0].spans[0].trace_id = bytes(16)

    spans, rejected = decode_traces(request.SerializeToString())

    assert rejected == 1
    assert len(spans) == 2


def test_export_response_without_rejections_has_no_partial_success() -> None:
    """A clean reply leaves partial_success unset."""
    response = ExportTraceServiceResponse.FromString(export_response())

    assert not response.HasField("partial_success")


def test_export_response_reports_rejected_spans() -> None:
    """A reply with rejected spans parses back with partial_success set."""
    response = ExportTraceServiceResponse.FromString(export_response(2, "invalid trace id"))

    assert response.HasField("partial_success")
    assert response.partial_success.rejected_spans == 2
    assert response.partial_success.error_message == "invalid trace id"


# Hostile JSON: every fault is a DecodeError that names a place, never a value.

SECRET = "SECRET-7f3a"
GOOD_IDS = {"traceId": "01" * 16, "spanId": "02" * 8}


def json_spans(*spans: dict[str, object]) -> bytes:
    document = {"resourceSpans": [{"scopeSpans": [{"spans": list(spans)}]}]}
    return json.dumps(document).encode()


def decode_error(body: bytes) -> str:
    with pytest.raises(DecodeError) as caught:
        decode_traces(body, JSON)
    return str(caught.value)


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (b"[" * 100_000, "JSON nested too deeply"),
        (b'{"a":' * 100_000, "JSON nested too deeply"),
        (b'["x"]', "expected a JSON object"),
        (b'{"resourceSpans": 7', "not JSON"),
        (b'{"a": "\xff"}', "not UTF-8 at byte 7"),
        (
            b'{"resourceSpans": [{"scopeSpans": [{"spans": [{"startTimeUnixNano": 1'
            + b"0" * 5000
            + b"}]}]}]}",
            "a JSON value Python cannot read",
        ),
    ],
)
def test_unreadable_json_is_a_decode_error(body: bytes, expected: str) -> None:
    """Nesting past the recursion limit, non-objects and broken text are DecodeErrors."""
    assert expected in decode_error(body)


def test_unpaired_surrogates_are_repaired_where_they_are() -> None:
    """A lone surrogate in a value, an attribute key or an unknown key becomes U+FFFD (as
    the docs promise), and the span counts the strings repaired."""
    in_name = json_spans({**GOOD_IDS, "name": "\ud800" + SECRET})
    [span], rejected = decode_traces(in_name, JSON)
    assert (span.name, rejected) == ("\ufffd" + SECRET, 0)
    assert span.attributes == {REPAIRED: 1}
    in_key = json_spans(
        {**GOOD_IDS, "attributes": [{"key": "\udc00", "value": {"stringValue": SECRET}}]}
    )
    [span], _ = decode_traces(in_key, JSON)
    assert span.attributes == {"\ufffd": SECRET, REPAIRED: 1}
    # upb answered an unknown key holding a surrogate with SystemError; it never sees one.
    unknown = b'{"resourceSpans": [{"\\ud800' + SECRET.encode() + b'": 1}]}'
    assert decode_traces(unknown, JSON) == ([], 0)


def test_a_surrogate_outside_spans_marks_every_span_of_the_export() -> None:
    """One in a resource attribute reaches every span under it: each lists the repair."""
    body = json.dumps(
        {
            "resourceSpans": [
                {
                    "resource": {"attributes": [{"key": "k", "value": {"stringValue": "\ud800"}}]},
                    "scopeSpans": [{"spans": [GOOD_IDS, {**GOOD_IDS, "spanId": "03" * 8}]}],
                }
            ]
        }
    ).encode()
    spans, _ = decode_traces(body, JSON)
    assert [(s.resource, s.attributes) for s in spans] == [({"k": "\ufffd"}, {REPAIRED: 1})] * 2


def test_paired_surrogates_and_nul_are_text() -> None:
    """An escaped emoji (a surrogate pair) and a NUL decode as ordinary characters."""
    body = json_spans({**GOOD_IDS, "name": "\U0001f600 a\x00b"})
    assert b"\\ud83d\\ude00" in body
    [span], rejected = decode_traces(body, JSON)
    assert span.name == "\U0001f600 a\x00b" and rejected == 0


@pytest.mark.parametrize(
    ("span", "expected"),
    [
        ({**GOOD_IDS, "traceId": SECRET}, "traceId is not hex (11 characters) at resourceSpans"),
        ({**GOOD_IDS, "spanId": "ab"}, "spanId is not 8 bytes but 1 at resourceSpans"),
        ({**GOOD_IDS, "startTimeUnixNano": SECRET}, "an invalid value in resourceSpans."),
        ({**GOOD_IDS, "droppedAttributesCount": -1}, "a number out of range"),
        (
            {**GOOD_IDS, "attributes": [{"key": "k", "value": {"boolValue": SECRET}}]},
            "an invalid value at resourceSpans[0].scopeSpans[0].spans[0].attributes[0]",
        ),
        (
            {
                **GOOD_IDS,
                "attributes": [{"key": "k", "value": {"boolValue": True, "stringValue": SECRET}}],
            },
            "more than one value of a oneof",
        ),
    ],
)
def test_bad_fields_are_named_without_their_values(span: dict[str, object], expected: str) -> None:
    """The message gives the field, a length and the position, and never the value sent."""
    message = decode_error(json_spans(span))
    assert expected in message
    assert SECRET not in message and "'ab'" not in message


def test_kvlists_nested_past_protobufs_limit_are_rejected_briefly() -> None:
    """A kvlist 40 levels deep (past protobuf's depth limit, within the JSON one) is
    refused at protobuf's, in a short message."""
    value: dict[str, object] = {"stringValue": SECRET}
    for _ in range(40):
        value = {"kvlistValue": {"values": [{"key": "k", "value": value}]}}
    message = decode_error(json_spans({**GOOD_IDS, "attributes": [{"key": "k", "value": value}]}))
    assert "nesting too deep" in message and len(message) < 200


def test_protobuf_nested_past_the_limit_is_a_decode_error() -> None:
    """A protobuf AnyValue nested 120 arrays deep fails in upb, as a DecodeError."""
    value = AnyValue(string_value=SECRET)
    for _ in range(120):
        outer = AnyValue()
        outer.array_value.values.add().CopyFrom(value)
        value = outer
    request = ExportTraceServiceRequest()
    span = request.resource_spans.add().scope_spans.add().spans.add()
    span.trace_id, span.span_id = b"\x01" * 16, b"\x02" * 8
    span.attributes.add(key="k").value.CopyFrom(value)
    with pytest.raises(DecodeError, match="MaxDepth") as caught:
        decode_traces(request.SerializeToString())
    assert SECRET not in str(caught.value)
