"""Buffer spans (and joined log records) per trace until the trace is complete.

A trace is complete when its root span has arrived (OTLP only carries ended
spans) and nothing of it has arrived for the quiet period. A trace that never
shows a root (its root went elsewhere) is released after ``max_wait``. When more
than ``max_traces`` are buffered, the oldest are released early and marked
evicted: their evidence may be partial, so they are stored but not scored.

Items that arrive for a trace released a moment ago reopen it with everything
it had, so the record is rebuilt whole. Released traces are kept for this
(at most ``remember`` of them, for at most ``remember_seconds``), and their
bytes count in ``bytes_in_flight`` with the pending ones, so a memory cap on
it covers everything held. Given ``max_bytes`` (the pipeline's cap), the
oldest released traces are dropped to stay under it, so keeping them never
refuses new spans: dropping one only costs a late span its rebuild. Without
it they age out, and a pipeline capping ``bytes_in_flight`` answers 503 until
they do. Not thread-safe: the pipeline locks.

Admission is one step although a request's items are added only after its spool write
(outside the lock, so concurrent requests share an fsync): the check ``reserve``s the
request's items, bytes and new traces, and every later check counts them, until ``add``
(or ``cancel``, when the write fails) gives them back.
"""

from __future__ import annotations

import sys
import time
from collections import Counter, OrderedDict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .spans import IngestSpan, TraceItem
from .tenancy import tenant_of

# The most of the trace bound one request may open while other traces wait.
ONE_REQUEST_SHARE = 0.25
EVICTED = "evicted before the trace completed: too many traces in flight"
# What an item costs beyond its values: the dataclass, its ids, list slots.
_ITEM_OVERHEAD = 400
_EVENT_OVERHEAD = 200
# Types with nothing nested: the common case, checked by identity because
# isinstance against a Mapping ABC costs ten times as much per value.
_SCALARS = frozenset({str, bytes, int, float, bool, type(None)})
_getsizeof = sys.getsizeof


@dataclass(slots=True)
class _Pending:
    first_seen_ns: int
    last_seen_ns: int
    items: list[TraceItem] = field(default_factory=list)
    has_root: bool = False
    reopened: bool = False
    size: int = 0
    # Spans of one request share their resource's dict: counted once per trace.
    resources: set[int] = field(default_factory=set)


@dataclass(frozen=True, slots=True)
class _Released:
    items: list[TraceItem]
    size: int
    has_root: bool
    resources: set[int]
    released_ns: int


def value_size(value: Any) -> int:
    """Bytes a decoded value holds, nested lists and mappings included.

    sys.getsizeof is O(1) per object and counts what a string really takes
    (1, 2 or 4 bytes a character); nesting is bounded by the decoder.
    """
    kind = type(value)
    total = _getsizeof(value)
    if kind in _SCALARS:
        return total
    if kind is dict or isinstance(value, Mapping):
        for key, item in value.items():
            total += _getsizeof(key)
            total += _getsizeof(item) if type(item) in _SCALARS else value_size(item)
    elif kind is list or kind is tuple:
        for item in value:
            total += _getsizeof(item) if type(item) in _SCALARS else value_size(item)
    return total


def approximate_size(item: TraceItem) -> int:
    """Bytes an item holds, roughly: every value in it plus a fixed overhead.

    A span's resource is left out: spans share it, so the assembler counts it
    once per trace.
    """
    total = _ITEM_OVERHEAD + value_size(item.attributes)
    if isinstance(item, IngestSpan):
        total += sys.getsizeof(item.name) + sys.getsizeof(item.trace_state)
        for event in item.events:
            total += _EVENT_OVERHEAD + sys.getsizeof(event.name) + value_size(event.attributes)
    else:
        total += sys.getsizeof(item.event_name) + value_size(item.body)
    return total


@dataclass(frozen=True, slots=True)
class Request:
    """One request's items, measured before the lock is taken."""

    sizes: tuple[int, ...]
    bytes: int
    """The items' sizes with each resource once per trace: at least what ``add`` counts."""
    traces: frozenset[str]


def measure(items: Sequence[TraceItem]) -> Request:
    sizes = tuple(approximate_size(item) for item in items)
    traces: set[str] = set()
    resources: dict[int, int] = {}
    shared: set[tuple[str, int]] = set()
    total = sum(sizes)
    for item in items:
        key = trace_key(item)
        traces.add(key)
        if isinstance(item, IngestSpan) and (key, id(item.resource)) not in shared:
            shared.add((key, id(item.resource)))
            if id(item.resource) not in resources:
                resources[id(item.resource)] = value_size(item.resource)
            total += resources[id(item.resource)]
    return Request(sizes, total, frozenset(traces))


@dataclass(frozen=True, slots=True)
class Reservation:
    """What an admitted request holds until its items are added: their sizes, measured
    once, and the traces it was first to open."""

    sizes: tuple[int, ...]
    bytes: int
    traces: frozenset[str]


@dataclass(frozen=True, slots=True)
class Assembled:
    """The items of one trace, released for extraction."""

    items: list[TraceItem]
    incomplete: str | None = None
    reopened: bool = False


class TraceAssembler:
    """Traces in assembly; ``bytes_in_flight`` counts them and the released ones kept."""

    def __init__(
        self,
        quiet_seconds: float,
        max_traces: int,
        max_wait_seconds: float | None = None,
        clock: Callable[[], int] = time.monotonic_ns,
        remember: int = 1000,
        remember_seconds: float | None = None,
        max_bytes: int | None = None,
    ) -> None:
        self._quiet_ns = int(quiet_seconds * 1e9)
        wait = max_wait_seconds if max_wait_seconds is not None else max(30.0, 10 * quiet_seconds)
        self._max_wait_ns = int(wait * 1e9)
        # Late spans mostly come one export batch late (the SDK's BatchSpanProcessor
        # sends every 5 s). Longer would hold memory that counts against the cap.
        keep = remember_seconds if remember_seconds is not None else max(10.0, 5 * quiet_seconds)
        self._remember_ns = int(keep * 1e9)
        self._max_traces = max_traces
        self._max_bytes = max_bytes
        self._clock = clock
        self._pending: OrderedDict[str, _Pending] = OrderedDict()
        self._released: OrderedDict[str, _Released] = OrderedDict()
        self._remember = remember
        self._evicted: list[Assembled] = []
        self.items_in_flight = 0
        # Pending and released traces alike: every byte held counts against a cap.
        self.bytes_in_flight = 0
        self.bytes_released = 0
        self.evicted_total = 0
        # Admitted requests whose items are not added yet (see the module docstring).
        self._reserved_items = 0
        self._reserved_bytes = 0
        self._reserved_traces: Counter[str] = Counter()

    def __len__(self) -> int:
        return len(self._pending)

    def refusal(self, request: Request | None, max_items: int) -> str | None:
        """Why ``request`` may not be admitted now (the receiver answers 503), or None;
        what admitted requests reserved counts as added."""
        items = self.items_in_flight + self._reserved_items
        if items + (len(request.sizes) if request else 0) > max_items:
            return f"{items} spans wait for assembly"
        held = self.bytes_in_flight + self._reserved_bytes
        if self._max_bytes is not None and held >= self._max_bytes:
            return f"{held // 1_000_000} MB of spans wait for assembly"
        # Refused before the trace bound forces evictions, which store traces as
        # incomplete: exporters retry, evictions lose the chance to score. The traces
        # a request would open count, and while others are in flight one request opens
        # at most a share of the bound: it cannot crowd them out.
        # Without items: could one more trace come in?
        new = len(self._new_traces(request)) if request and request.sizes else 1
        traces = len(self._pending) + len(self._reserved_traces)
        if traces + new > self._max_traces * 0.9:
            return f"{traces} traces wait for assembly and the export opens {new}"
        if traces and new > self._max_traces * ONE_REQUEST_SHARE:
            return f"one export opens {new} traces while {traces} wait for assembly"
        return None

    def never_fits(self, request: Request) -> str | None:
        """Why ``request`` could not be admitted even into an empty assembler, or None."""
        most = int(self._max_traces * 0.9)
        if len(request.traces) > most:
            return (
                f"one export opens {len(request.traces)} traces, more than the {most} "
                "in assembly at once (FAITHMON_MAX_TRACES_IN_FLIGHT): send smaller batches"
            )
        return None

    def _new_traces(self, request: Request) -> frozenset[str]:
        return frozenset(request.traces - self._pending.keys() - self._reserved_traces.keys())

    def reserve(self, request: Request) -> Reservation:
        """Hold room for an admitted request until ``add`` or ``cancel``."""
        held = Reservation(request.sizes, request.bytes, self._new_traces(request))
        self._reserved_items += len(held.sizes)
        self._reserved_bytes += held.bytes
        self._reserved_traces.update(held.traces)
        return held

    def cancel(self, held: Reservation) -> None:
        """Give back what ``held`` reserved (its request will not be added)."""
        self._reserved_items -= len(held.sizes)
        self._reserved_bytes -= held.bytes
        for key in held.traces:
            self._reserved_traces[key] -= 1
            if not self._reserved_traces[key]:
                del self._reserved_traces[key]

    def add(self, items: Iterable[TraceItem], held: Reservation | None = None) -> None:
        """Add items (those of an admitted request: its reservation is given back)."""
        if held is not None:
            self.cancel(held)
        now = self._clock()
        for n, item in enumerate(items):
            key = trace_key(item)
            pending = self._pending.get(key)
            if pending is None:
                pending = self._open(key, now)
            pending.items.append(item)
            pending.last_seen_ns = now
            size = held.sizes[n] if held is not None else approximate_size(item)
            if isinstance(item, IngestSpan) and id(item.resource) not in pending.resources:
                pending.resources.add(id(item.resource))
                size += value_size(item.resource)
            pending.size += size
            self.bytes_in_flight += size
            self.items_in_flight += 1
            if _is_root(item):
                pending.has_root = True
        while len(self._pending) > self._max_traces:
            _, oldest = self._pending.popitem(last=False)
            self._evicted.append(self._release(oldest, now, EVICTED))
            self.evicted_total += 1
        self._trim_released(now)

    def _open(self, key: str, now: int) -> _Pending:
        earlier = self._released.pop(key, None)
        pending = _Pending(now, now)
        if earlier is not None:
            # Its bytes stay counted: they move from released back to pending.
            self.bytes_released -= earlier.size
            pending.items.extend(earlier.items)
            pending.has_root = earlier.has_root
            pending.reopened = True
            pending.size = earlier.size
            pending.resources = earlier.resources
            self.items_in_flight += len(earlier.items)
        self._pending[key] = pending
        return pending

    def _release(self, pending: _Pending, now: int, incomplete: str | None = None) -> Assembled:
        self.items_in_flight -= len(pending.items)
        self._released[trace_key(pending.items[0])] = _Released(
            pending.items, pending.size, pending.has_root, pending.resources, now
        )
        self.bytes_released += pending.size
        return Assembled(pending.items, incomplete, pending.reopened)

    def _trim_released(self, now: int) -> None:
        """Drop released traces, oldest first: past the count, the age, or the byte cap."""
        while self._released:
            _, oldest = next(iter(self._released.items()))
            if not (
                len(self._released) > self._remember
                or now - oldest.released_ns >= self._remember_ns
                or (self._max_bytes is not None and self.bytes_in_flight >= self._max_bytes)
            ):
                return
            self._released.popitem(last=False)
            self.bytes_released -= oldest.size
            self.bytes_in_flight -= oldest.size

    def pop_ready(self) -> list[Assembled]:
        now = self._clock()
        ready, self._evicted = self._evicted, []
        for trace_id in list(self._pending):
            pending = self._pending[trace_id]
            quiet = now - pending.last_seen_ns >= self._quiet_ns
            if (pending.has_root and quiet) or now - pending.first_seen_ns >= self._max_wait_ns:
                ready.append(self._release(self._pending.pop(trace_id), now))
        self._trim_released(now)
        return ready

    def pop_all(self) -> list[Assembled]:
        now = self._clock()
        ready, self._evicted = self._evicted, []
        ready.extend(self._release(p, now) for p in self._pending.values())
        self._pending.clear()
        self._trim_released(now)
        return ready


def trace_key(item: TraceItem) -> str:
    """What a trace is assembled under: its id, and the tenant the receiver stamped on
    the span or log record. Items of one trace id sent by two tenants' keys are two
    traces, never one record: another tenant's span cannot re-stamp, rewrite or backdate
    a trace."""
    tenant = tenant_of(item)
    return item.trace_id if tenant is None else f"{tenant}\x1f{item.trace_id}"


def _is_root(item: TraceItem) -> bool:
    return isinstance(item, IngestSpan) and item.parent_span_id is None
