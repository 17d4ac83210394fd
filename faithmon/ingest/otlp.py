"""OTLP/HTTP protobuf: decode export requests into IngestSpans and build replies."""

from __future__ import annotations

from typing import Any

from google.protobuf.message import DecodeError as ProtobufDecodeError
from google.rpc import status_pb2
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.trace.v1.trace_pb2 import Status

from ..errors import DecodeError
from .spans import IngestSpan

PROTOBUF = "application/x-protobuf"
# google.rpc.Code.INVALID_ARGUMENT
_INVALID_ARGUMENT = 3


def any_value(value: AnyValue) -> Any:
    kind = value.WhichOneof("value")
    if kind is None:
        return None
    if kind == "array_value":
        return [any_value(v) for v in value.array_value.values]
    if kind == "kvlist_value":
        return attributes(value.kvlist_value.values)
    if kind == "bytes_value":
        return value.bytes_value.hex()
    return getattr(value, kind)


def attributes(pairs: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    pair: KeyValue
    for pair in pairs:
        out[pair.key] = any_value(pair.value)
    return out


def decode_traces(body: bytes) -> tuple[list[IngestSpan], int]:
    """Decode an ExportTraceServiceRequest; returns the spans and how many were rejected."""
    try:
        request = ExportTraceServiceRequest.FromString(body)
    except (ProtobufDecodeError, ValueError) as exc:
        raise DecodeError(f"not an OTLP ExportTraceServiceRequest: {exc}") from None
    spans: list[IngestSpan] = []
    rejected = 0
    for resource_spans in request.resource_spans:
        resource = attributes(resource_spans.resource.attributes)
        for scope_spans in resource_spans.scope_spans:
            for span in scope_spans.spans:
                if len(span.trace_id) != 16 or len(span.span_id) != 8 or not any(span.trace_id):
                    rejected += 1
                    continue
                parent = span.parent_span_id.hex() if span.parent_span_id else None
                spans.append(
                    IngestSpan(
                        trace_id=span.trace_id.hex(),
                        span_id=span.span_id.hex(),
                        parent_span_id=parent,
                        name=span.name,
                        start_ns=span.start_time_unix_nano,
                        end_ns=span.end_time_unix_nano,
                        attributes=attributes(span.attributes),
                        resource=resource,
                        error=span.status.code == Status.STATUS_CODE_ERROR,
                        dropped_attributes=span.dropped_attributes_count,
                    )
                )
    return spans, rejected


def export_response(rejected: int = 0, message: str = "") -> bytes:
    response = ExportTraceServiceResponse()
    if rejected:
        response.partial_success.rejected_spans = rejected
        response.partial_success.error_message = message
    body: bytes = response.SerializeToString()
    return body


def status_body(message: str, code: int = _INVALID_ARGUMENT) -> bytes:
    body: bytes = status_pb2.Status(code=code, message=message).SerializeToString()
    return body
