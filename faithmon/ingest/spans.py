"""The shapes ingest works on, whatever transport delivered them."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

REPAIRED = "faithmon.ingest.surrogates_replaced"
"""An attribute the OTLP/JSON decoder sets on a span or log record: how many of its
strings (or of the resource or scope it came under) held lone surrogates, now U+FFFD.
The record's note only counts the items so marked: one an app sets itself can add to
a number, never put its own text in a note."""


@dataclass(frozen=True, slots=True)
class IngestEvent:
    """A span event (OpenLLMetry puts vector-database hits in ``db.query.result`` events)."""

    name: str
    time_ns: int
    attributes: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class IngestSpan:
    """A finished span with plain-Python attribute values; ids are lowercase hex."""

    trace_id: str
    span_id: str
    parent_span_id: str | None
    name: str
    start_ns: int
    end_ns: int
    attributes: Mapping[str, Any] = field(default_factory=dict)
    resource: Mapping[str, Any] = field(default_factory=dict)
    error: bool = False
    dropped_attributes: int = 0
    events: tuple[IngestEvent, ...] = ()
    dropped_events: int = 0
    trace_state: str = ""


@dataclass(frozen=True, slots=True)
class IngestLog:
    """A log record joined to a trace: older GenAI instrumentations put message
    content in log events (``gen_ai.user.message``, ``gen_ai.choice``)."""

    trace_id: str
    span_id: str | None
    event_name: str
    time_ns: int
    body: Any
    attributes: Mapping[str, Any] = field(default_factory=dict)


TraceItem = IngestSpan | IngestLog
