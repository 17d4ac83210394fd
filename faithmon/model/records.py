"""What ingest makes and the store keeps: RAG records, chunks, feedback, sampling, and
the segments a record belongs to."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from types import MappingProxyType
from typing import Any, Protocol

from .judgement import Judgement


@dataclass(frozen=True, slots=True)
class Chunk:
    """A retrieved chunk as it was passed to the generator."""

    position: int
    text: str
    id: str | None = None
    score: float | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class RagRecord:
    """One RAG request, assembled from the spans of one trace."""

    trace_id: str
    question: str
    answer: str
    chunks: tuple[Chunk, ...]
    labels: Mapping[str, str]
    started_at: datetime
    sample_reason: str = "sampled"
    retrieved: tuple[Chunk, ...] = ()
    generation: Mapping[str, Any] = field(default_factory=dict)
    keep: str | None = None
    incomplete: str | None = None
    """Why the evidence cannot be trusted whole (cut or dropped chunks); never scored then."""
    convention: str = ""
    """Which tracing conventions the record was read from, e.g. ``openinference``."""
    error: bool = False
    """A span of the trace ended with an error status."""
    trace_state: str = ""
    """The root span's W3C tracestate (``ot=th:...`` carries an upstream sampling threshold)."""
    root_span_id: str = ""
    """16 hex digits; evaluation events are parented to it."""
    late: bool = False
    """Rebuilt after late spans: it replaces the stored record unless that was scored."""
    repairs: tuple[str, ...] = ()
    """What was changed to make the record storable (NUL removed, NaN score nulled, ...)."""


@dataclass(frozen=True, slots=True)
class Feedback:
    """User feedback on an earlier request, sent after it."""

    trace_id: str
    value: str | int | float | bool
    at: datetime


@dataclass(frozen=True, slots=True)
class Decision:
    """A sampler's verdict on one record, with its reason and the segment it counted in.

    Reasons: ``sampled``, ``sampled_out``, ``rate_limited``, ``filtered`` and
    ``rule:<name>`` for keep-always rules.
    """

    keep: bool
    reason: str
    segment: Mapping[str, str] = field(default_factory=dict, compare=False)


def kept_because(reason: str | None) -> str:
    """Why the sampler kept a stored record, for a person: the ratio's draw (``sampled``)
    or a keep-always rule (``rule:<name>``); the trace page and ``traces show`` say it."""
    if not reason:
        return "kept (no reason recorded)"
    if reason == "sampled":
        return "kept by the sampling ratio"
    rule = reason.removeprefix("rule:")
    return f"kept by the keep-always rule {rule}" if rule != reason else f"kept: {reason}"


@dataclass(frozen=True, slots=True)
class StoredRecord:
    """A record as stored, with its status and every evaluation of it."""

    id: int
    record: RagRecord
    status: str
    evaluations: tuple[Judgement, ...] = ()
    feedback: tuple[Feedback, ...] = ()


@dataclass(frozen=True, slots=True)
class SamplingTally:
    """How many records of one segment met one sampling decision in one hour."""

    hour: datetime
    segment: Mapping[str, str]
    reason: str
    count: int


@dataclass(frozen=True, slots=True)
class DroppedTrace:
    """A trace the sampler dropped for a reason worth looking up later."""

    trace_id: str
    reason: str
    segment: Mapping[str, str]
    at: datetime


SaveFn = Callable[[Sequence[RagRecord]], None]


SaveSamplingFn = Callable[[Sequence[SamplingTally], Sequence[DroppedTrace]], None]


SaveFeedbackFn = Callable[[Sequence[Feedback]], None]


class Sampler(Protocol):
    def keep(self, record: RagRecord) -> Decision: ...


class Scrubber(Protocol):
    def __call__(self, record: RagRecord) -> RagRecord: ...


TENANT = "tenant"


def partition_label(dimensions: Sequence[str]) -> str | None:
    """The label whose values partition segments: ``tenant`` when it is a dimension. Drift,
    ``/metrics`` and the retention roll-ups all segment through it, so no figure anywhere
    mixes tenants and every one names the segments drift names."""
    return TENANT if TENANT in dimensions else None


def segments_of(
    labels: Mapping[str, str], dimensions: Sequence[str], partition: str | None = None
) -> list[dict[str, str]]:
    """A record's segments: overall ({}) and one per monitored label the record has.

    With ``partition`` (a label such as ``tenant``), a record that has that label is in
    its value's partition: its overall is ``{partition: value}`` and each of its segments
    adds one monitored label to that, so no segment spans two values. A record without
    the label has the segments above.
    """
    value = labels.get(partition) if partition else None
    root = {partition: value} if partition and value else {}
    return [root] + [{**root, d: labels[d]} for d in dimensions if d != partition and labels.get(d)]


# The segment-key codec. Keys are unique columns in the store and are read back (the
# API's URLs, the labels a baseline names), so a value holding ``,`` or ``=`` must not
# spell another segment. Only the three characters the syntax uses are percent-encoded
# (``%`` first, so the escapes added are not escaped again): a key without them reads as
# it always did, and every key stored before the codec whose names and values had none of
# them is still the key of its segment. A key stored before with one of them in a value
# (``route=a,b``) no longer matches the key made now (``route=a%2Cb``); see docs/drift.md.
_ESCAPES = {"%": "%25", ",": "%2C", "=": "%3D"}
_ESCAPED = re.compile("%(25|2C|3D)", re.IGNORECASE)


def _escape(text: str) -> str:
    for char, escape in _ESCAPES.items():
        text = text.replace(char, escape)
    return text


def _unescape(text: str) -> str:
    # Only the codec's own escapes: any other ``%`` (``route=100%`` stored before the
    # codec) is read as itself.
    return _ESCAPED.sub(lambda m: chr(int(m.group(1), 16)), text)


def segment_name(segment: Mapping[str, str], empty: str = "overall") -> str:
    """A segment as people read it (messages, pages, the CLI): ``name=value`` pairs as
    given, unescaped; ``empty`` for overall. Never a key: two segments may read alike."""
    return ",".join(f"{k}={segment[k]}" for k in sorted(segment)) or empty


def segment_key(segment: Mapping[str, str]) -> str:
    """Canonical text of a segment: ``route=billing,tenant=acme``; '' is overall.

    Names sorted, each ``name=value`` with ``%``, ``,`` and ``=`` in either written
    ``%25``, ``%2C`` and ``%3D``: ``{"route": "a,b"}`` is ``route=a%2Cb``. Read back with
    :func:`segment_from_key`."""
    return ",".join(f"{_escape(k)}={_escape(segment[k])}" for k in sorted(segment))


def segment_from_key(key: str) -> dict[str, str] | None:
    """The segment :func:`segment_key` wrote as ``key`` ('' → overall, {}); None for text
    it never writes (a part without ``=``, an empty name, a name twice)."""
    if not key:
        return {}
    segment: dict[str, str] = {}
    for part in key.split(","):
        name, sep, value = part.partition("=")
        name = _unescape(name)
        if not (sep and name) or name in segment:
            return None
        segment[name] = _unescape(value)
    return segment


LABEL_PATTERN = r"^[A-Za-z0-9_.\-]{1,100}[=:][^\x00]*$"
"""A label filter, ``key=value`` (or ``key:value``, its older spelling, kept as an alias):
a name as instrumentation writes label names (it is spliced into a JSON path on SQLite,
so nothing else may reach a query), a separator, then any value without NUL."""
_LABEL = re.compile(LABEL_PATTERN)


def parse_label(text: str) -> tuple[str, str] | None:
    """``route=billing`` or ``route:billing`` → ("route", "billing"); None when malformed.

    A name holds neither separator, so the first one ends it and the value keeps the rest
    (``url=http://host:80`` → ("url", "http://host:80"))."""
    if not _LABEL.fullmatch(text):
        return None
    cut = min(i for i in (text.find("="), text.find(":")) if i >= 0)
    return text[:cut], text[cut + 1 :]


OTHER_SEGMENT: Mapping[str, str] = MappingProxyType({"segment": "other"})
"""Where ingest counts the segments past its cap on per-segment state: a segment like
any other (stored, keyed and shown the same way), under a label name faithmon never
sets on a record, so drift's sampling weights match it to no record."""
