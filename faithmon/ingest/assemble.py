"""Buffer spans (and joined log records) per trace until the trace is complete.

A trace is complete when its root span has arrived (OTLP only carries ended
spans) and nothing of it has arrived for the quiet period. A trace that never
shows a root (its root went elsewhere) is released after ``max_wait``. When more
than ``max_traces`` are buffered, the oldest are released early and marked
evicted: their evidence may be partial, so they are stored but not scored.

Items that arrive for a trace released a moment ago reopen it with everything
it had, so the record is rebuilt whole; the last ``remember`` released traces
are kept for this. Not thread-safe: the pipeline locks.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from .spans import IngestSpan, TraceItem

EVICTED = "evicted before the trace completed: too many traces in flight"


@dataclass(slots=True)
class _Pending:
    first_seen_ns: int
    last_seen_ns: int
    items: list[TraceItem] = field(default_factory=list)
    has_root: bool = False
    reopened: bool = False
    size: int = 0


def approximate_size(item: TraceItem) -> int:
    """Bytes an item holds, roughly: its string values plus a fixed overhead."""
    total = 400
    for value in item.attributes.values():
        if isinstance(value, str):
            total += len(value)
    if isinstance(item, IngestSpan):
        for event in item.events:
            total += 200 + sum(len(v) for v in event.attributes.values() if isinstance(v, str))
    elif isinstance(item.body, str):
        total += len(item.body)
    return total


@dataclass(frozen=True, slots=True)
class Assembled:
    """The items of one trace, released for extraction."""

    items: list[TraceItem]
    incomplete: str | None = None
    reopened: bool = False


class TraceAssembler:
    def __init__(
        self,
        quiet_seconds: float,
        max_traces: int,
        max_wait_seconds: float | None = None,
        clock: Callable[[], int] = time.monotonic_ns,
        remember: int = 1000,
    ) -> None:
        self._quiet_ns = int(quiet_seconds * 1e9)
        wait = max_wait_seconds if max_wait_seconds is not None else max(30.0, 10 * quiet_seconds)
        self._max_wait_ns = int(wait * 1e9)
        self._max_traces = max_traces
        self._clock = clock
        self._pending: OrderedDict[str, _Pending] = OrderedDict()
        self._released: OrderedDict[str, list[TraceItem]] = OrderedDict()
        self._remember = remember
        self._evicted: list[Assembled] = []
        self.items_in_flight = 0
        self.bytes_in_flight = 0
        self.evicted_total = 0

    def __len__(self) -> int:
        return len(self._pending)

    def add(self, items: Iterable[TraceItem]) -> None:
        now = self._clock()
        for item in items:
            pending = self._pending.get(item.trace_id)
            if pending is None:
                earlier = self._released.pop(item.trace_id, None)
                pending = _Pending(now, now)
                if earlier is not None:
                    pending.items.extend(earlier)
                    pending.has_root = any(_is_root(i) for i in earlier)
                    pending.reopened = True
                    pending.size = sum(approximate_size(i) for i in earlier)
                    self.items_in_flight += len(earlier)
                    self.bytes_in_flight += pending.size
                self._pending[item.trace_id] = pending
            pending.items.append(item)
            pending.last_seen_ns = now
            size = approximate_size(item)
            pending.size += size
            self.bytes_in_flight += size
            self.items_in_flight += 1
            if _is_root(item):
                pending.has_root = True
        while len(self._pending) > self._max_traces:
            _, oldest = self._pending.popitem(last=False)
            self._evicted.append(self._release(oldest, EVICTED))
            self.evicted_total += 1

    def _release(self, pending: _Pending, incomplete: str | None = None) -> Assembled:
        self.items_in_flight -= len(pending.items)
        self.bytes_in_flight -= pending.size
        trace_id = pending.items[0].trace_id
        self._released[trace_id] = pending.items
        while len(self._released) > self._remember:
            self._released.popitem(last=False)
        return Assembled(pending.items, incomplete, pending.reopened)

    def pop_ready(self) -> list[Assembled]:
        now = self._clock()
        ready, self._evicted = self._evicted, []
        for trace_id in list(self._pending):
            pending = self._pending[trace_id]
            quiet = now - pending.last_seen_ns >= self._quiet_ns
            if (pending.has_root and quiet) or now - pending.first_seen_ns >= self._max_wait_ns:
                ready.append(self._release(self._pending.pop(trace_id)))
        return ready

    def pop_all(self) -> list[Assembled]:
        ready, self._evicted = self._evicted, []
        ready.extend(self._release(p) for p in self._pending.values())
        self._pending.clear()
        return ready


def _is_root(item: TraceItem) -> bool:
    return isinstance(item, IngestSpan) and item.parent_span_id is None
