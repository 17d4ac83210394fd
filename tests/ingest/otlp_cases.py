"""Hypothesis strategies for hostile OTLP/HTTP requests (tests/ingest/test_fuzz.py, bench/fuzz.py).

A case is a body with its headers. Most are valid-ish ExportTraceServiceRequests
(random attributes: NUL, NaN, huge strings, kvlists nested past protobuf's limit,
ids of wrong lengths) encoded as protobuf or OTLP JSON, then sometimes damaged:
truncated, compressed (gzip, deflate, many gzip members, truncated gzip) or sent
with an unknown Content-Encoding or Content-Type. The rest are random bytes or
random JSON. Every answer to any of them must be one of ``EXPECTED``.
"""

from __future__ import annotations

import base64
import gzip
import json
import tempfile
import zlib
from dataclasses import dataclass
from typing import Any

from google.protobuf import json_format
from hypothesis import configuration
from hypothesis import strategies as st
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue

# Hypothesis caches Unicode tables and source constants even without a database:
# in the temporary directory, not in the work tree.
configuration.set_hypothesis_home_dir(f"{tempfile.gettempdir()}/faithmon-hypothesis")

PROTOBUF = "application/x-protobuf"
JSON = "application/json"
EXPECTED = frozenset({200, 400, 408, 413, 415})
# Past this the receiver under test answers 413 (create_app's max_body_bytes).
MAX_BODY_BYTES = 1_000_000
_ID_KEYS = ("traceId", "spanId", "parentSpanId")
# No encoding five times in twelve: most bodies arrive as exporters send them.
_ENCODINGS = ("",) * 5 + (
    "identity",
    "gzip",
    "gzip",
    "deflate",
    "gzip-members",
    "gzip-cut",
    "bogus",
)


@dataclass(frozen=True, slots=True)
class Case:
    """One request: its body, headers and a short label for tallies."""

    body: bytes
    headers: dict[str, str]
    label: str


def _rarely(chance: int) -> st.SearchStrategy[bool]:
    """True about once in ``chance`` draws (Hypothesis favours 0 and the maximum, so
    ``integers(0, n) == 0`` would be true far more often than 1 in n+1)."""
    return st.integers(0, chance - 1).map(lambda i: i == chance // 2)


# codec="utf-8" leaves out lone surrogates: protobuf cannot hold them (JSON cases add them).
_text = st.text(alphabet=st.characters(codec="utf-8"), max_size=40) | st.sampled_from(
    ["", "\x00", "a\x00b", "\ufffd", "\U0001f600", "é" * 50]
)
_huge = st.sampled_from([1_000, 50_000, 300_000]).map(lambda n: "x" * n)
_string = _rarely(12).flatmap(lambda huge: _huge if huge else _text)
_scalar = st.one_of(
    _string.map(lambda s: AnyValue(string_value=s)),
    st.booleans().map(lambda b: AnyValue(bool_value=b)),
    st.integers(-(2**63), 2**63 - 1).map(lambda i: AnyValue(int_value=i)),
    st.floats(allow_nan=True, allow_infinity=True).map(lambda f: AnyValue(double_value=f)),
    st.binary(max_size=64).map(lambda b: AnyValue(bytes_value=b)),
    st.just(AnyValue()),
)


def _array(values: list[AnyValue]) -> AnyValue:
    value = AnyValue()
    value.array_value.values.extend(values)
    return value


def _kvlist(pairs: list[tuple[str, AnyValue]]) -> AnyValue:
    value = AnyValue()
    for key, item in pairs:
        value.kvlist_value.values.add(key=key).value.CopyFrom(item)
    return value


def _deep(depth: int) -> AnyValue:
    value = AnyValue(string_value="leaf")
    for _ in range(depth):
        value = _kvlist([("k", value)])
    return value


_any_value = st.recursive(
    _scalar,
    lambda children: st.one_of(
        st.lists(children, max_size=4).map(_array),
        st.lists(st.tuples(_text, children), max_size=4).map(_kvlist),
    ),
    max_leaves=12,
)
# Each kvlist level is three protobuf messages: past 33 levels upb refuses the body.
_deep_value = st.sampled_from([2, 10, 30, 34, 60, 130]).map(_deep)
# Attributes the extractors read, so accepted bodies go through extraction too.
_rag_attribute = st.one_of(
    st.tuples(
        st.sampled_from(["openinference.span.kind"]),
        st.sampled_from(["CHAIN", "RETRIEVER", "RERANKER", "LLM", "?"]),
    ),
    st.tuples(st.sampled_from(["faithmon.role"]), st.sampled_from(["request", "?"])),
    st.tuples(
        st.sampled_from(
            [
                "input.value",
                "output.value",
                "retrieval.documents.0.document.content",
                "retrieval.documents.1.document.content",
                "retrieval.documents.0.document.score",
                "retrieval.documents.0.document.metadata",
                "gen_ai.operation.name",
                "gen_ai.retrieval.documents",
                "llm.output_messages.0.message.content",
            ]
        ),
        _string,
    ),
).map(lambda pair: (pair[0], AnyValue(string_value=pair[1])))
_attribute = st.one_of(
    _rag_attribute,
    st.tuples(_text, _rarely(8).flatmap(lambda deep: _deep_value if deep else _any_value)),
)
_attributes = st.lists(_attribute, max_size=6)


def _id(size: int) -> st.SearchStrategy[bytes]:
    """Mostly a valid id (never all zeros), sometimes one of the wrong length."""
    valid = st.binary(min_size=size, max_size=size).map(lambda b: b[:-1] + b"\x01")
    return _rarely(6).flatmap(lambda bad: st.binary(max_size=size + 4) if bad else valid)


_id16 = _id(16)
_id8 = _id(8)
_uint64 = st.integers(0, 2**64 - 1)


def _add_attributes(target: Any, pairs: list[tuple[str, AnyValue]]) -> None:
    for key, value in pairs:
        pair: KeyValue = target.add(key=key)
        pair.value.CopyFrom(value)


@st.composite
def export_requests(draw: st.DrawFn) -> ExportTraceServiceRequest:
    """A valid-ish ExportTraceServiceRequest with random content."""
    request = ExportTraceServiceRequest()
    for _ in range(draw(st.integers(1, 2))):
        resource_spans = request.resource_spans.add()
        _add_attributes(resource_spans.resource.attributes, draw(_attributes))
        scope_spans = resource_spans.scope_spans.add()
        scope_spans.scope.name = draw(_text)
        for _ in range(draw(st.integers(0, 4))):
            span = scope_spans.spans.add()
            span.trace_id = draw(_id16)
            span.span_id = draw(_id8)
            if draw(st.booleans()):
                span.parent_span_id = draw(_id8)
            span.name = draw(_text)
            span.start_time_unix_nano = draw(_uint64)
            span.end_time_unix_nano = draw(_uint64)
            span.status.code = draw(st.integers(0, 2))
            _add_attributes(span.attributes, draw(_attributes))
            for _ in range(draw(st.integers(0, 2))):
                event = span.events.add(name=draw(_text), time_unix_nano=draw(_uint64))
                _add_attributes(event.attributes, draw(_attributes))
    return request


def _hex_ids(node: Any) -> Any:
    """OTLP JSON spells ids in hex where json_format writes base64."""
    if isinstance(node, list):
        return [_hex_ids(item) for item in node]
    if isinstance(node, dict):
        return {
            key: base64.b64decode(value).hex()
            if key in _ID_KEYS and isinstance(value, str)
            else _hex_ids(value)
            for key, value in node.items()
        }
    return node


def _otlp_json(request: ExportTraceServiceRequest, hex_ids: bool) -> bytes:
    document = json_format.MessageToDict(request)
    # json.dumps writes NaN and Infinity bare, as some exporters do.
    return json.dumps(_hex_ids(document) if hex_ids else document).encode()


_json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.floats(allow_nan=True)
    | st.integers()
    | st.text(max_size=20)
    | st.sampled_from(["\ud800", "\udc00x", "0" * 33, "traceId"]),
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(
            st.sampled_from([*_ID_KEYS, "resourceSpans", "spans", "\ud800", "x"]),
            children,
            max_size=4,
        )
    ),
    max_leaves=20,
)
_deep_json = st.builds(
    lambda opener, depth: opener * depth,
    st.sampled_from([b"[", b'{"a":', b'{"resourceSpans":[']),
    st.integers(1, 200_000),
)


@st.composite
def bodies(draw: st.DrawFn) -> tuple[bytes, str, str]:
    """A raw body, its content type and a label."""
    kind = draw(st.sampled_from(["protobuf", "otlp-json", "base64-json", "json", "deep", "bytes"]))
    if kind == "protobuf":
        return draw(export_requests()).SerializeToString(), PROTOBUF, kind
    if kind in ("otlp-json", "base64-json"):
        return _otlp_json(draw(export_requests()), kind == "otlp-json"), JSON, kind
    if kind == "json":
        value = draw(_json_values)
        text = json.dumps(value) if draw(st.booleans()) else json.dumps({"resourceSpans": value})
        return text.encode("utf-8", "surrogatepass"), JSON, kind
    if kind == "deep":
        return draw(_deep_json), JSON, kind
    return draw(st.binary(max_size=512)), draw(st.sampled_from([PROTOBUF, JSON])), kind


def _members(body: bytes, count: int) -> bytes:
    return gzip.compress(body) + gzip.compress(b"") * (count - 1)


@st.composite
def cases(draw: st.DrawFn) -> Case:
    """A body, maybe damaged and compressed, with headers."""
    body, content_type, label = draw(bodies())
    if body and draw(_rarely(10)):
        body = body[: draw(st.integers(0, len(body) - 1))]
        label += "+cut"
    headers = {"Content-Type": content_type}
    encoding = draw(st.sampled_from(_ENCODINGS))
    if encoding == "gzip":
        body = gzip.compress(body)
    elif encoding == "deflate":
        body = zlib.compress(body)
    elif encoding == "gzip-members":
        body = _members(body, draw(st.sampled_from([2, 999, 1000, 1001, 5000])))
    elif encoding == "gzip-cut":
        packed = gzip.compress(body)
        body = packed[: draw(st.integers(0, len(packed) - 1))]
    elif encoding == "bogus":
        headers["Content-Encoding"] = draw(st.sampled_from(["br", "zstd", "gzip, gzip", "x" * 300]))
    if encoding in ("gzip", "deflate", "gzip-members", "gzip-cut"):
        headers["Content-Encoding"] = "deflate" if encoding == "deflate" else "gzip"
    if encoding:
        label += f"+{encoding}"
    if draw(_rarely(20)):
        headers["Content-Type"] = draw(
            st.sampled_from(
                ["text/plain", "application/json; charset=utf-8", "", "application/x-protobuf;x=1"]
            )
        )
        label += "+type"
    return Case(body, headers, label)
