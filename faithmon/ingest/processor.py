"""In-process span processor: feeds finished SDK spans straight into the pipeline."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any

from opentelemetry.sdk.trace import ReadableSpan, SpanProcessor
from opentelemetry.trace import StatusCode

from ..errors import SaturatedError
from .spans import IngestEvent, IngestSpan

logger = logging.getLogger(__name__)


def from_readable(span: ReadableSpan) -> IngestSpan | None:
    context = span.context
    if context is None or not context.is_valid:
        return None
    parent = span.parent
    return IngestSpan(
        trace_id=f"{context.trace_id:032x}",
        span_id=f"{context.span_id:016x}",
        parent_span_id=f"{parent.span_id:016x}" if parent is not None else None,
        name=span.name,
        start_ns=span.start_time or 0,
        end_ns=span.end_time or 0,
        attributes=dict(span.attributes or {}),
        resource=dict(span.resource.attributes),
        error=span.status.status_code == StatusCode.ERROR,
        dropped_attributes=span.dropped_attributes,
        trace_state=context.trace_state.to_header() if context.trace_state else "",
        events=tuple(
            IngestEvent(e.name, e.timestamp or 0, dict(e.attributes or {})) for e in span.events
        ),
        dropped_events=span.dropped_events,
    )


class PipelineSpanProcessor(SpanProcessor):
    """Hands each ended span to ``sink``; never raises into the instrumented app.

    While the pipeline is saturated (its store is down) spans are dropped and
    counted; the first drop and every thousandth are logged, not each one.
    """

    def __init__(self, sink: Callable[[Sequence[IngestSpan]], Any]) -> None:
        self._sink = sink
        self.dropped = 0

    def on_end(self, span: ReadableSpan) -> None:
        try:
            converted = from_readable(span)
            if converted is not None:
                self._sink([converted])
        except SaturatedError as exc:
            self.dropped += 1
            if self.dropped % 1000 == 1:
                logger.warning("faithmon: %d spans dropped so far: %s", self.dropped, exc)
        except Exception as exc:
            self.dropped += 1
            logger.error("faithmon: in-process span capture failed (%s)", type(exc).__name__)
