"""TraceAssembler: when a buffered trace is complete, and what happens on overflow."""

from __future__ import annotations

import pytest

from faithmon.ingest.assemble import EVICTED, Assembled, TraceAssembler
from faithmon.ingest.spans import IngestSpan

SECOND = 1_000_000_000


class FakeClock:
    """A clock in nanoseconds that moves only when told to."""

    def __init__(self) -> None:
        self.times = [0]

    def __call__(self) -> int:
        return self.times[-1]

    def advance(self, seconds: float) -> None:
        self.times.append(self.times[-1] + round(seconds * SECOND))


@pytest.fixture
def clock() -> FakeClock:
    """A fake monotonic clock starting at zero."""
    return FakeClock()


@pytest.fixture
def assembler(clock: FakeClock) -> TraceAssembler:
    """An assembler with a 2 s quiet period, 30 s max wait and room for 3 traces."""
    return TraceAssembler(quiet_seconds=2.0, max_traces=3, max_wait_seconds=30.0, clock=clock)


def span(trace: int, span: int, parent: int | None = None) -> IngestSpan:
    return IngestSpan(
        trace_id=f"{trace:032x}",
        span_id=f"{span:016x}",
        parent_span_id=None if parent is None else f"{parent:016x}",
        name=f"span-{span}",
        start_ns=span,
        end_ns=span + 1,
    )


def ids(traces: list[Assembled]) -> list[list[str]]:
    return [[s.span_id[-2:] for s in trace.items] for trace in traces]


def test_trace_is_ready_after_root_and_quiet_period(
    assembler: TraceAssembler, clock: FakeClock
) -> None:
    """A rooted trace is released only once no span has arrived for the quiet period."""
    assembler.add([span(1, 2, parent=1)])
    clock.advance(1.5)
    assembler.add([span(1, 1)])
    assert assembler.pop_ready() == []

    clock.advance(1.9)
    assert assembler.pop_ready() == []

    clock.advance(0.1)
    ready = assembler.pop_ready()
    assert ids(ready) == [["02", "01"]]
    assert len(assembler) == 0


def test_late_span_restarts_the_quiet_period(assembler: TraceAssembler, clock: FakeClock) -> None:
    """A span arriving after the root pushes the release back by a full quiet period."""
    assembler.add([span(1, 1)])
    clock.advance(1.5)
    assembler.add([span(1, 2, parent=1)])
    clock.advance(1.5)
    assert assembler.pop_ready() == []

    clock.advance(0.5)
    assert ids(assembler.pop_ready()) == [["01", "02"]]


def test_trace_without_root_waits_for_max_wait(assembler: TraceAssembler, clock: FakeClock) -> None:
    """A trace whose root never arrives is released after max_wait, not after the quiet period."""
    assembler.add([span(1, 2, parent=1)])
    clock.advance(10)
    assert assembler.pop_ready() == []

    clock.advance(19.9)
    assert assembler.pop_ready() == []

    clock.advance(0.1)
    assert ids(assembler.pop_ready()) == [["02"]]
    assert len(assembler) == 0


def test_default_max_wait_is_at_least_thirty_seconds(clock: FakeClock) -> None:
    """Without max_wait_seconds a rootless trace waits 30 s (or ten quiet periods if longer)."""
    assembler = TraceAssembler(quiet_seconds=1.0, max_traces=10, clock=clock)
    assembler.add([span(1, 2, parent=1)])
    clock.advance(29.9)
    assert assembler.pop_ready() == []

    clock.advance(0.1)
    assert len(assembler.pop_ready()) == 1


def test_overflow_evicts_the_oldest_trace(assembler: TraceAssembler, clock: FakeClock) -> None:
    """Past max_traces the oldest trace is released early, whole, and counted."""
    for trace in (1, 2, 3):
        assembler.add([span(trace, trace * 10, parent=1)])
        clock.advance(0.1)
    assembler.add([span(1, 11, parent=1)])
    assert assembler.evicted_total == 0

    assembler.add([span(4, 40, parent=1)])

    assert len(assembler) == 3
    assert assembler.evicted_total == 1
    ready = assembler.pop_ready()
    assert [[s.trace_id for s in trace.items] for trace in ready] == [[f"{1:032x}"] * 2]
    assert ids(ready) == [["0a", "0b"]]
    assert ready[0].incomplete == EVICTED
    assert len(assembler) == 3


def test_pop_all_releases_everything(assembler: TraceAssembler, clock: FakeClock) -> None:
    """pop_all returns evicted and pending traces alike and leaves the buffer empty."""
    for trace in (1, 2, 3, 4):
        assembler.add([span(trace, trace, parent=None if trace % 2 else 99)])

    everything = assembler.pop_all()

    assert sorted(trace.items[0].trace_id for trace in everything) == [
        f"{t:032x}" for t in (1, 2, 3, 4)
    ]
    assert len(assembler) == 0
    assert assembler.pop_all() == []
    clock.advance(60)
    assert assembler.pop_ready() == []


def test_late_spans_reopen_a_released_trace(assembler: TraceAssembler, clock: FakeClock) -> None:
    """A span arriving after its trace was released brings the trace back whole."""
    assembler.add([span(1, 1), span(1, 2, parent=1)])
    clock.advance(2)
    [first] = assembler.pop_ready()
    assert not first.reopened
    assembler.add([span(1, 3, parent=1)])
    assert assembler.items_in_flight == 3
    clock.advance(2)
    [again] = assembler.pop_ready()
    assert again.reopened and ids([again]) == [["01", "02", "03"]]
    assert assembler.items_in_flight == 0
