"""OTLP/HTTP: decode trace and log export requests (protobuf or JSON), build replies.

OTLP JSON differs from protobuf's JSON mapping in one trap: trace and span ids
are hex, while ``json_format`` reads bytes fields as base64 and would silently
decode a hex id into different bytes. Ids are converted before parsing, and an
id that is not hex of the right length is rejected.

Bodies come from anyone who can reach the port, so decoding is bounded and
quiet: nesting is capped (JSON at ``BODY_MAX_DEPTH`` levels, ``json_format``
and upb at 100 message levels), the walk over a JSON document is iterative, and
a DecodeError names a field, a length and a position, never a value from the
body, since it is logged and sent back.

A lone surrogate escape (``"\\ud800"``) is valid JSON but no text protobuf can
hold: it becomes U+FFFD, and each span or log record that held one carries
``REPAIRED``, so its record lists the repair.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Iterable, Iterator
from functools import cache
from typing import Any

from google.protobuf import json_format
from google.protobuf.descriptor import Descriptor
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
from . import bounded_json
from .spans import REPAIRED, IngestEvent, IngestLog, IngestSpan

PROTOBUF = "application/x-protobuf"
JSON = "application/json"
# google.rpc.Code.INVALID_ARGUMENT
_INVALID_ARGUMENT = 3
_ID_BYTES = {"traceId": 16, "spanId": 8, "parentSpanId": 8}
BODY_MAX_DEPTH = 256
"""JSON levels a body may nest: json_format stops at 100 message levels, which OTLP
spells in under 200."""
# Only a body that spells a surrogate as an escape can hold a lone one after json.loads
# (raw bytes must be UTF-8), so the slower pass over every string runs only then.
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89abcdefABCDEF]")
_SURROGATE = re.compile("[\ud800-\udfff]")
# The lists whose items become spans or log records, the owners of a repair.
_ITEM_LISTS = frozenset({"spans", "logRecords"})
# json_format ends most messages with the path it failed at: field names and indices.
_PARSE_PATH = re.compile(r"at \"?Export(?:Trace|Logs)ServiceRequest((?:\.\w+|\[\d+\])+)")
_PARSE_FIELD = re.compile(r"Failed to parse (\w+) field")
_SHOWN_FIELDS = 8
# What json_format says, mapped to words of ours: its own may quote the value.
_PARSE_REASONS = (
    ("too deep", "nesting too deep"),
    ("out of range", "a number out of range"),
    ("multiple", "more than one value of a oneof"),
    ("null", "a null in a list"),
    ("must be in []", "a value where a list belongs"),
)


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


class _BadJson(Exception):
    """Found in the walk: ``where`` (a container) and ``at`` (its key or index) locate it."""

    def __init__(self, reason: str, where: Any, at: str | int | None = None) -> None:
        super().__init__(reason)
        self.where = where
        self.at = at


def _id_to_base64(key: str, value: str, node: dict[str, Any]) -> str:
    try:
        raw = bytes.fromhex(value)
    except ValueError:
        raise _BadJson(f"{key} is not hex ({len(value)} characters)", node, key) from None
    if len(raw) != _ID_BYTES[key]:
        raise _BadJson(f"{key} is not {_ID_BYTES[key]} bytes but {len(raw)}", node, key)
    return base64.b64encode(raw).decode()


def _prepare(document: Any) -> None:
    """Rewrite OTLP JSON's hex ids, in place, into the base64 json_format expects.

    Iterative, so depth costs no stack.
    """
    stack = [document]
    while stack:
        node = stack.pop()
        if isinstance(node, list):
            stack.extend(item for item in node if isinstance(item, dict | list))
            continue
        for key, value in node.items():
            if key in _ID_BYTES and isinstance(value, str):
                if value:
                    node[key] = _id_to_base64(key, value, node)
            elif isinstance(value, dict | list):
                stack.append(value)


def _replaced(text: str) -> str:
    return _SURROGATE.sub("\ufffd", text)


def _repair_surrogates(document: Any) -> None:
    """Replace, in place, each unpaired surrogate in a key or a string by U+FFFD (upb
    cannot take them: it fails with SystemError on keys), and mark each span or log
    record that held one with ``REPAIRED``: how many strings. One outside them (in a
    resource, a scope) counts in every span and log record of the export."""
    items: list[dict[str, Any]] = []
    counts: dict[int, int] = {}  # id(span or log record) → strings repaired in it
    outside = 0
    # (node, the span or log record it lies in, whether its items are spans or records)
    stack: list[tuple[Any, dict[str, Any] | None, bool]] = [(document, None, False)]
    while stack:
        node, owner, holds_items = stack.pop()
        repaired = 0
        if isinstance(node, list):
            for index, item in enumerate(node):
                if isinstance(item, str) and _SURROGATE.search(item):
                    node[index] = _replaced(item)
                    repaired += 1
                elif isinstance(item, dict) and holds_items:
                    items.append(item)
                    stack.append((item, item, False))
                elif isinstance(item, dict | list):
                    stack.append((item, owner, False))
        else:
            if any(_SURROGATE.search(key) for key in node):
                renamed = {_replaced(k): v for k, v in node.items()}
                repaired += sum(1 for key in node if _SURROGATE.search(key))
                node.clear()
                node.update(renamed)
            for key, value in node.items():
                if isinstance(value, str) and _SURROGATE.search(value):
                    node[key] = _replaced(value)
                    repaired += 1
                elif isinstance(value, dict | list):
                    holds = owner is None and key in _ITEM_LISTS and isinstance(value, list)
                    stack.append((value, owner, holds))
        if owner is None:
            outside += repaired
        elif repaired:
            counts[id(owner)] = counts.get(id(owner), 0) + repaired
    for item in items:
        count = counts.get(id(item), 0) + outside
        if count and isinstance(item.setdefault("attributes", []), list):
            item["attributes"].append({"key": REPAIRED, "value": {"intValue": str(count)}})


@cache
def _field_names(descriptor: Descriptor) -> frozenset[str]:
    """Every JSON field name under ``descriptor``: the only keys a position may show."""
    names: set[str] = set()
    seen: set[str] = set()
    todo = [descriptor]
    while todo:
        current = todo.pop()
        if current.full_name in seen:
            continue
        seen.add(current.full_name)
        for field in current.fields:
            names.update((field.name, field.json_name))
            if field.message_type is not None:
                todo.append(field.message_type)
    return frozenset(names)


def _position(document: Any, target: Any, at: str | int | None, known: frozenset[str]) -> str:
    """Where ``target`` sits in ``document``, as ``resourceSpans[0].scopeSpans[1]...``."""

    def step(key: str | int) -> str:
        if isinstance(key, int):
            return f"[{key}]"
        return f".{key}" if key in known else ".<unknown field>"

    def walk() -> Iterator[tuple[Any, str]]:
        stack: list[tuple[Any, str]] = [(document, "")]
        while stack:
            node, path = stack.pop()
            yield node, path
            children = node.items() if isinstance(node, dict) else enumerate(node)
            for key, child in children:
                if isinstance(child, dict | list):
                    stack.append((child, path + step(key)))

    for node, path in walk():
        if node is target:
            full = path + ("" if at is None else step(at))
            return full.lstrip(".") or "the top level"
    return "an unknown position"


def _parse_error_message(exc: Exception, known: frozenset[str]) -> str:
    text = str(exc)
    lowered = text.lower()
    reason = next((words for key, words in _PARSE_REASONS if key in lowered), "an invalid value")
    found = _PARSE_PATH.search(text)
    if found is not None:
        return f"{reason} at {found.group(1).lstrip('.')}"
    fields = [f for f in _PARSE_FIELD.findall(text) if f in known]
    if not fields:
        return reason
    # Too-deep chains repeat "values.value" a hundred times: the start says where.
    shown = ".".join(fields[:_SHOWN_FIELDS]) + (
        " and deeper" if len(fields) > _SHOWN_FIELDS else ""
    )
    return f"{reason} in {shown}"


def _parse_json(body: bytes, message: Message) -> None:
    name = type(message).__name__
    try:
        document = bounded_json.loads(body, BODY_MAX_DEPTH)
    except bounded_json.TooDeep:
        raise DecodeError(f"not an OTLP {name}: JSON nested too deeply") from None
    except UnicodeDecodeError as exc:
        raise DecodeError(f"not an OTLP {name}: not UTF-8 at byte {exc.start}") from None
    except json.JSONDecodeError as exc:
        where = f"line {exc.lineno} column {exc.colno}"
        raise DecodeError(f"not an OTLP {name}: not JSON ({exc.msg} at {where})") from None
    except ValueError:  # e.g. an integer of more digits than Python converts
        raise DecodeError(f"not an OTLP {name}: a JSON value Python cannot read") from None
    if not isinstance(document, dict):
        raise DecodeError(f"not an OTLP {name}: expected a JSON object")
    if _SURROGATE_ESCAPE.search(body) is not None:
        _repair_surrogates(document)
    try:
        _prepare(document)
    except _BadJson as bad:
        where = _position(document, bad.where, bad.at, _field_names(message.DESCRIPTOR))
        raise DecodeError(f"not an OTLP {name}: {bad} at {where}") from None
    try:
        json_format.ParseDict(document, message, ignore_unknown_fields=True)
    except (json_format.ParseError, ValueError, TypeError) as exc:
        known = _field_names(message.DESCRIPTOR)
        raise DecodeError(f"not an OTLP {name}: {_parse_error_message(exc, known)}") from None
    except RecursionError:
        raise DecodeError(f"not an OTLP {name}: nesting too deep") from None


def _parse(body: bytes, content_type: str, message: Message) -> None:
    if content_type == JSON:
        _parse_json(body, message)
        return
    try:
        message.ParseFromString(body)
    except (ProtobufDecodeError, ValueError, TypeError, RecursionError) as exc:
        # upb's messages name the message type and the fault, never the bytes.
        raise DecodeError(f"not an OTLP {type(message).__name__}: {exc}") from None


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
