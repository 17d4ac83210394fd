"""Buffer spans per trace until the trace is complete.

A trace is complete when its root span has arrived (OTLP only carries ended
spans) and no span of it has arrived for the quiet period. A trace that never
shows its root is flushed after ``max_wait``; when more than ``max_traces`` are
buffered, the oldest are flushed early. Not thread-safe: the pipeline locks.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from .spans import IngestSpan


@dataclass(slots=True)
class _Pending:
    first_seen_ns: int
    last_seen_ns: int
    spans: list[IngestSpan] = field(default_factory=list)
    has_root: bool = False


class TraceAssembler:
    def __init__(
        self,
        quiet_seconds: float,
        max_traces: int,
        max_wait_seconds: float | None = None,
        clock: Callable[[], int] = time.monotonic_ns,
    ) -> None:
        self._quiet_ns = int(quiet_seconds * 1e9)
        wait = max_wait_seconds if max_wait_seconds is not None else max(30.0, 10 * quiet_seconds)
        self._max_wait_ns = int(wait * 1e9)
        self._max_traces = max_traces
        self._clock = clock
        self._pending: OrderedDict[str, _Pending] = OrderedDict()
        self._evicted: list[list[IngestSpan]] = []
        self.evicted_total = 0

    def __len__(self) -> int:
        return len(self._pending)

    def add(self, spans: Iterable[IngestSpan]) -> None:
        now = self._clock()
        for span in spans:
            pending = self._pending.get(span.trace_id)
            if pending is None:
                pending = self._pending[span.trace_id] = _Pending(now, now)
            pending.spans.append(span)
            pending.last_seen_ns = now
            if span.parent_span_id is None:
                pending.has_root = True
        while len(self._pending) > self._max_traces:
            _, oldest = self._pending.popitem(last=False)
            self._evicted.append(oldest.spans)
            self.evicted_total += 1

    def pop_ready(self) -> list[list[IngestSpan]]:
        now = self._clock()
        ready, self._evicted = self._evicted, []
        for trace_id in list(self._pending):
            pending = self._pending[trace_id]
            quiet = now - pending.last_seen_ns >= self._quiet_ns
            if (pending.has_root and quiet) or now - pending.first_seen_ns >= self._max_wait_ns:
                ready.append(self._pending.pop(trace_id).spans)
        return ready

    def pop_all(self) -> list[list[IngestSpan]]:
        ready, self._evicted = self._evicted, []
        ready.extend(p.spans for p in self._pending.values())
        self._pending.clear()
        return ready
