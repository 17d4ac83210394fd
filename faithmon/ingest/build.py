"""The steps that make one assembled trace storable, as plain functions of picklable
values, so the pipeline runs them on its own thread or in worker processes alike.

    read(trace)                → Read: the record (extract) and the feedback spans carry
    (the pipeline samples: its state is one per receiver)
    finish(record, reason, s)  → Finished: scrubbed and storable, or refused
    finish_feedback(items, s)  → the feedback scrubbed, with how many were dropped

Nothing here logs content or raises for a trace's data: a failure is returned as the
exception's type name, which the pipeline counts and logs with the trace's size.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from ..model import Feedback, RagRecord, Scrubber
from .assemble import Assembled
from .extract import extract, extract_feedback
from .storable import storable, storable_feedback

WORKER_CRASHED = "WorkerCrashed"
"""The failure of a trace whose step took down its worker process each time it ran."""


@dataclass(frozen=True, slots=True)
class Read:
    """What one trace holds: its record (None when it is not a RAG trace or failed)."""

    trace_id: str
    size: int
    record: RagRecord | None = None
    feedback: tuple[Feedback, ...] = ()
    failed: str | None = None
    feedback_failed: str | None = None


@dataclass(frozen=True, slots=True)
class Finished:
    """A record ready for the store, or the reason it is not (the scrubber failed)."""

    trace_id: str
    record: RagRecord | None = None
    failed: str | None = None


def read(trace: Assembled) -> Read:
    """Extract the record and the feedback of one trace."""
    trace_id = trace.items[0].trace_id
    size = len(trace.items)
    feedback: tuple[Feedback, ...] = ()
    feedback_failed = None
    try:
        feedback = tuple(extract_feedback(trace.items))
    except Exception as exc:
        feedback_failed = type(exc).__name__
    try:
        record = extract(trace.items)
    except Exception as exc:
        return Read(trace_id, size, None, feedback, type(exc).__name__, feedback_failed)
    if record is not None:
        if trace.incomplete and not record.incomplete:
            record = replace(record, incomplete=trace.incomplete)
        if trace.reopened:
            record = replace(record, late=True)
    return Read(trace_id, size, record, feedback, None, feedback_failed)


def crashed_read(trace: Assembled) -> Read:
    return Read(trace.items[0].trace_id, len(trace.items), failed=WORKER_CRASHED)


def finish(record: RagRecord, reason: str, scrubber: Scrubber) -> Finished:
    """Scrub a kept record and make it storable; fails closed (no record) if scrubbing does."""
    try:
        scrubbed = scrubber(record)
    except Exception as exc:
        return Finished(record.trace_id, None, type(exc).__name__)
    return Finished(record.trace_id, storable(replace(scrubbed, sample_reason=reason)))


def crashed_finish(record: RagRecord, _reason: str) -> Finished:
    return Finished(record.trace_id, None, WORKER_CRASHED)


def finish_feedback(items: Sequence[Feedback], scrubber: Scrubber) -> tuple[list[Feedback], int]:
    """Feedback with its free text scrubbed; text without a text scrubber, or that the
    scrubber fails on, is dropped (fail closed). Returns the items kept and how many
    were dropped."""
    scrub_text = getattr(scrubber, "scrub_text", None)
    kept: list[Feedback] = []
    dropped = 0
    for item in items:
        if isinstance(item.value, str):
            try:
                if scrub_text is None:
                    raise TypeError("free text needs a text scrubber")
                item = replace(item, value=scrub_text(item.value))
            except Exception:
                dropped += 1
                continue
        kept.append(storable_feedback(item))
    return kept, dropped
