"""User feedback that arrives after the request: a small span of its own trace."""

from __future__ import annotations

from . import _setup
from . import attributes as attr
from ._log import log_once


def record_feedback(trace_id: str | int, value: str | int | float | bool) -> None:
    """Attach feedback (thumbs up/down, a rating, a label) to an earlier request's trace."""
    try:
        hex_id = f"{trace_id:032x}" if isinstance(trace_id, int) else trace_id.lower()
        if len(hex_id) != 32 or int(hex_id, 16) == 0:
            raise ValueError(f"not a trace id: {trace_id!r}")
        span = _setup.tracer().start_span(attr.SPAN_FEEDBACK)
        try:
            span.set_attributes(
                {
                    attr.FEEDBACK_TRACE_ID: hex_id,
                    attr.FEEDBACK_VALUE: value,
                    attr.FAITHMON_ROLE: attr.ROLE_FEEDBACK,
                }
            )
        finally:
            span.end()
    except Exception:
        log_once("record_feedback", "record_feedback failed")
