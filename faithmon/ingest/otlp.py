"""OTLP/HTTP: decode trace and log export requests (protobuf or JSON), build replies.

OTLP JSON differs from protobuf's JSON mapping in one trap: trace and span ids
are hex, while ``json_format`` reads bytes fields as base64 and would silently
decode a hex id into different bytes. Ids are converted before parsing, and an
id that is not hex of the right length is rejected.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Iterable
from typing import Any

from google.protobuf import json_format
from google.protobuf.message import DecodeError as ProtobufDecodeError
from google.protobuf.message import Message
from google.rpc import status_pb2
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import (
    ExportLogsServiceRequest,
    ExportLogsServiceResponse,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.trace.v1.trace_pb2 import Status

from ..errors import DecodeError
from .spans import IngestEvent, IngestLog, IngestSpan

PROTOBUF = "application/x-protobuf"
JSON = "application/json"
# google.rpc.Code.INVALID_ARGUMENT
_INVALID_ARGUMENT = 3
_ID_BYTES = {"traceId": 16, "spanId": 8, "parentSpanId": 8}


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


def attributes(pairs: Iterable[KeyValue]) -> dict[str, Any]:
    return {pair.key: any_value(pair.value) for pair in pairs}


def _hex_ids_to_base64(node: Any) -> None:
    """Rewrite OTLP JSON's hex ids, in place, into the base64 json_format expects."""
    if isinstance(node, list):
        for item in node:
            _hex_ids_to_base64(item)
        return
    if not isinstance(node, dict):
        return
    for key, value in node.items():
        if key in _ID_BYTES and isinstance(value, str):
            if value == "":
                continue
            try:
                raw = bytes.fromhex(value)
            except ValueError:
                raise DecodeError(f"{key} {value!r} is not hex") from None
            if len(raw) != _ID_BYTES[key]:
                raise DecodeError(f"{key} {value!r} is not {_ID_BYTES[key]} bytes")
            node[key] = base64.b64encode(raw).decode()
        else:
            _hex_ids_to_base64(value)


def _parse(body: bytes, content_type: str, message: Message) -> None:
    try:
        if content_type == JSON:
            document = json.loads(body)
            _hex_ids_to_base64(document)
            json_format.ParseDict(document, message, ignore_unknown_fields=True)
        else:
            message.ParseFromString(body)
    except DecodeError:
        raise
    except (ProtobufDecodeError, json_format.ParseError, ValueError, TypeError) as exc:
        name = type(message).__name__
        raise DecodeError(f"not an OTLP {name}: {exc}") from None


def _hex(raw: bytes, size: int) -> str | None:
    if len(raw) != size or not any(raw):
        return None
    return binascii.hexlify(raw).decode()


def decode_traces(body: bytes, content_type: str = PROTOBUF) -> tuple[list[IngestSpan], int]:
    """Decode an ExportTraceServiceRequest; returns the spans and how many were rejected."""
    request = ExportTraceServiceRequest()
    _parse(body, content_type, request)
    return spans_from_request(request)


def spans_from_request(request: ExportTraceServiceRequest) -> tuple[list[IngestSpan], int]:
    """The spans of a parsed request, and how many lacked valid trace or span ids."""
    spans: list[IngestSpan] = []
    rejected = 0
    for resource_spans in request.resource_spans:
        resource = attributes(resource_spans.resource.attributes)
        for scope_spans in resource_spans.scope_spans:
            for span in scope_spans.spans:
                trace_id = _hex(span.trace_id, 16)
                span_id = _hex(span.span_id, 8)
                if trace_id is None or span_id is None:
                    rejected += 1
                    continue
                spans.append(
                    IngestSpan(
                        trace_id=trace_id,
                        span_id=span_id,
                        parent_span_id=_hex(span.parent_span_id, 8),
                        name=span.name,
                        start_ns=span.start_time_unix_nano,
                        end_ns=span.end_time_unix_nano,
                        attributes=attributes(span.attributes),
                        resource=resource,
                        error=span.status.code == Status.STATUS_CODE_ERROR,
                        dropped_attributes=span.dropped_attributes_count,
                        events=tuple(
                            IngestEvent(e.name, e.time_unix_nano, attributes(e.attributes))
                            for e in span.events
                        ),
                        dropped_events=span.dropped_events_count,
                        trace_state=span.trace_state,
                    )
                )
    return spans, rejected


def decode_logs(body: bytes, content_type: str = PROTOBUF) -> tuple[list[IngestLog], int]:
    """Decode an ExportLogsServiceRequest; keeps log records that name a trace.

    Returns the logs and how many were rejected (records without a trace id
    cannot be joined to a RAG request).
    """
    request = ExportLogsServiceRequest()
    _parse(body, content_type, request)
    return logs_from_request(request)


def logs_from_request(request: ExportLogsServiceRequest) -> tuple[list[IngestLog], int]:
    """The log records of a parsed request that name a trace, and how many did not."""
    logs: list[IngestLog] = []
    rejected = 0
    for resource_logs in request.resource_logs:
        for scope_logs in resource_logs.scope_logs:
            for record in scope_logs.log_records:
                trace_id = _hex(record.trace_id, 16)
                if trace_id is None:
                    rejected += 1
                    continue
                attrs = attributes(record.attributes)
                event_name = record.event_name or str(attrs.get("event.name", ""))
                logs.append(
                    IngestLog(
                        trace_id=trace_id,
                        span_id=_hex(record.span_id, 8),
                        event_name=event_name,
                        time_ns=record.time_unix_nano or record.observed_time_unix_nano,
                        body=any_value(record.body),
                        attributes=attrs,
                    )
                )
    return logs, rejected


def _serialise(message: Message, content_type: str) -> bytes:
    if content_type == JSON:
        return json.dumps(json_format.MessageToDict(message)).encode()
    body: bytes = message.SerializeToString()
    return body


def export_response(
    rejected: int = 0, message: str = "", content_type: str = PROTOBUF, logs: bool = False
) -> bytes:
    """The reply to an export; ``partial_success`` only when something was rejected."""
    response: ExportTraceServiceResponse | ExportLogsServiceResponse
    if logs:
        response = ExportLogsServiceResponse()
        if rejected:
            response.partial_success.rejected_log_records = rejected
            response.partial_success.error_message = message
    else:
        response = ExportTraceServiceResponse()
        if rejected:
            response.partial_success.rejected_spans = rejected
            response.partial_success.error_message = message
    return _serialise(response, content_type)


def status_body(message: str, content_type: str = PROTOBUF, code: int = _INVALID_ARGUMENT) -> bytes:
    return _serialise(status_pb2.Status(code=code, message=message), content_type)
