"""TraceAssembler: when a buffered trace is complete, and what happens on overflow."""

from __future__ import annotations

from dataclasses import replace

import pytest

from faithmon.errors import SaturatedError
from faithmon.ingest.assemble import (
    EVICTED,
    Assembled,
    TraceAssembler,
    approximate_size,
    value_size,
)
from faithmon.ingest.pipeline import Pipeline
from faithmon.ingest.sampler import KeepAll
from faithmon.ingest.scrub import identity
from faithmon.ingest.spans import IngestEvent, IngestSpan
from faithmon.model import RagRecord

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


# Memory: every byte held counts, released traces included.

MB = 1024 * 1024


def big_span(trace: int, span_id: int, size: int, parent: int | None = None) -> IngestSpan:
    """A span whose bulk is nested: a kvlist holding an array of strings, plus bytes-as-hex."""
    value = {"chunks": ["x" * (size // 4)] * 2, "meta": {"hex": "ab" * (size // 4)}}
    return replace(
        span(trace, span_id, parent),
        attributes={"retrieval.documents": value},
        resource={"service.name": "s" * 1000},
    )


def test_nested_values_resources_and_events_are_counted() -> None:
    """Strings inside lists and dicts, resource attributes and event attributes all count."""
    flat = span(1, 1)
    nested = replace(flat, attributes={"a": [["x" * 10_000]], "b": {"c": {"d": "y" * 10_000}}})
    assert approximate_size(nested) >= approximate_size(flat) + 20_000
    assert value_size("€" * 1000) >= 2000  # two bytes a character, as CPython holds it
    with_event = replace(flat, events=(IngestEvent("e", 0, {"k": ["z" * 5000]}),))
    assert approximate_size(with_event) >= approximate_size(flat) + 5000

    assembler = TraceAssembler(quiet_seconds=1, max_traces=10)
    resource = {"service.name": "r" * 50_000}
    assembler.add([replace(span(1, s), resource=resource) for s in (1, 2, 3)])
    # The three spans share one resource dict: counted once, not three times.
    alone = sum(approximate_size(span(1, s)) for s in (1, 2, 3))
    assert alone + 50_000 <= assembler.bytes_in_flight < alone + 2 * 50_000


def test_released_traces_count_until_they_expire(clock: FakeClock) -> None:
    """A released trace's bytes stay in bytes_in_flight while it is kept for late spans."""
    assembler = TraceAssembler(
        quiet_seconds=1, max_traces=10, clock=clock, remember_seconds=10, max_wait_seconds=30
    )
    assembler.add([big_span(1, 1, MB)])
    held = assembler.bytes_in_flight
    assert held > MB
    clock.advance(1)
    [_] = assembler.pop_ready()
    assert assembler.items_in_flight == 0
    assert assembler.bytes_in_flight == assembler.bytes_released == held
    clock.advance(10)
    assert assembler.pop_ready() == []
    assert assembler.bytes_in_flight == assembler.bytes_released == 0


def test_a_late_span_moves_the_bytes_back_without_counting_twice(clock: FakeClock) -> None:
    """Reopening a released trace keeps its bytes counted once."""
    assembler = TraceAssembler(quiet_seconds=1, max_traces=10, clock=clock)
    assembler.add([big_span(1, 1, MB)])
    clock.advance(1)
    assembler.pop_ready()
    before = assembler.bytes_in_flight
    late = span(1, 2, parent=1)
    assembler.add([late])
    assert assembler.bytes_released == 0
    assert assembler.bytes_in_flight == before + approximate_size(late) + value_size(late.resource)
    clock.advance(1)
    [again] = assembler.pop_ready()
    assert again.reopened and len(again.items) == 2


def test_many_large_traces_stay_under_the_byte_cap(clock: FakeClock) -> None:
    """With max_bytes, released traces give way oldest first: what is held stays under the cap."""
    cap = 16 * MB
    assembler = TraceAssembler(quiet_seconds=0.1, max_traces=1000, clock=clock, max_bytes=cap)
    one = approximate_size(big_span(1, 1, 2 * MB)) + 1000
    for trace in range(1, 121):
        assembler.add([big_span(trace, 1, 2 * MB)])
        assert assembler.bytes_in_flight <= cap + one
        clock.advance(0.2)
        assert len(assembler.pop_ready()) == 1
        assert assembler.bytes_in_flight < cap
        assert assembler.bytes_in_flight == assembler.bytes_released
    # The most recent traces are the ones still kept for late spans.
    assembler.add([span(120, 2, parent=1)])
    clock.advance(0.2)
    [rebuilt] = assembler.pop_ready()
    assert rebuilt.reopened
    assembler.add([span(1, 1)])
    clock.advance(0.2)
    [fresh] = assembler.pop_ready()
    assert not fresh.reopened


def test_pipeline_under_a_small_cap_refuses_then_recovers(clock: FakeClock) -> None:
    """Through the Pipeline, bytes held stay under max_bytes: released traces give way,
    and traces in flight past the cap get 503s, never a stuck buffer."""
    cap = 8 * MB
    saved: list[RagRecord] = []
    pipeline = Pipeline(
        saved.extend,
        sampler=KeepAll(),
        scrubber=identity,
        quiet_seconds=0.1,
        max_bytes=cap,
        clock=clock,
    )
    assembler = pipeline._assembler  # read only: the figure Pipeline._full compares with the cap
    one = approximate_size(big_span(1, 1, MB)) + 1000
    accepted = refused = 0
    for trace in range(1, 121):
        while True:
            try:
                pipeline.submit([big_span(trace, 1, MB)])
            except SaturatedError:
                refused += 1
                clock.advance(1)
                pipeline.tick()
                continue
            accepted += 1
            break
        assert assembler.bytes_in_flight <= cap + one
        clock.advance(0.2)
        pipeline.tick()
        assert assembler.bytes_in_flight <= cap + one
    # Released traces make room for new ones: the cap refuses only what is in flight.
    assert accepted == 120
    assert pipeline.stats["spans"] == 120
    with pytest.raises(SaturatedError):
        for trace in range(200, 220):  # twenty 1 MB traces, none released: past the cap
            pipeline.submit([big_span(trace, 1, MB)])
    assert assembler.bytes_in_flight <= cap + one
