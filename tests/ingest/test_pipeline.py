"""Pipeline: spans in, sampled and scrubbed records out to save, with nothing lost on failure."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

import pytest
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import faithmon_instrumentation as fm
from faithmon.errors import SaturatedError
from faithmon.ingest.pipeline import Pipeline
from faithmon.ingest.processor import from_readable
from faithmon.ingest.sampler import KeepAll
from faithmon.ingest.scrub import PiiScrubber, identity
from faithmon.ingest.spans import IngestSpan
from faithmon.model import Decision, RagRecord

SECOND = 1_000_000_000
MakeTrace = Callable[[str, str], list[IngestSpan]]


class ListSave:
    """A save callable that keeps what it is given, and fails while ``failing`` is set."""

    def __init__(self) -> None:
        self.records: list[RagRecord] = []
        self.calls = 0
        self.failing = False

    def __call__(self, records: Sequence[RagRecord]) -> None:
        self.calls += 1
        if self.failing:
            raise ConnectionError("database is down")
        self.records.extend(records)


class ReasonSampler:
    """Keeps everything, with a reason of its own."""

    def keep(self, record: RagRecord) -> Decision:
        return Decision(True, "always")


def broken_scrubber(record: RagRecord) -> RagRecord:
    raise RuntimeError("scrubber bug")


@pytest.fixture
def make_trace(span_exporter: InMemorySpanExporter) -> MakeTrace:
    """A function that records one RAG request with the shim and returns its ingest spans."""

    def make(question: str, answer: str) -> list[IngestSpan]:
        span_exporter.clear()
        with fm.rag_span(question, route="billing") as rag:
            rag.record_retrieval([f"Context for {question}"], retriever="kw")
            rag.record_answer(answer, model="m1")
        spans = [from_readable(s) for s in span_exporter.get_finished_spans()]
        return [s for s in spans if s is not None]

    return make


@pytest.fixture
def save() -> ListSave:
    """A list-collecting save callable."""
    return ListSave()


@pytest.fixture
def clock() -> list[int]:
    """A fake clock's readings in nanoseconds; the last one is now."""
    return [0]


def pipeline_with(save: ListSave, clock: list[int], **kwargs: object) -> Pipeline:
    options: dict[str, object] = {"sampler": KeepAll(), "scrubber": identity}
    options.update(kwargs)
    return Pipeline(save, quiet_seconds=2.0, clock=lambda: clock[-1], **options)  # type: ignore[arg-type]


def test_shim_spans_become_one_record(
    save: ListSave, clock: list[int], make_trace: MakeTrace
) -> None:
    """The three spans of one request become one record after flush_all."""
    pipeline = pipeline_with(save, clock, sampler=ReasonSampler())

    pipeline.submit(make_trace("Where is order A17?", "It shipped."))
    assert save.records == []
    assert pipeline.flush_all() == 1

    [record] = save.records
    assert record.question == "Where is order A17?"
    assert record.answer == "It shipped."
    assert record.labels["route"] == "billing"
    assert record.sample_reason == "always"
    assert pipeline.stats["spans"] == 3
    assert pipeline.stats["records"] == 1


def test_tick_waits_for_the_quiet_period(
    save: ListSave, clock: list[int], make_trace: MakeTrace
) -> None:
    """tick() saves a trace only once it has been quiet for the quiet period."""
    pipeline = pipeline_with(save, clock)
    pipeline.submit(make_trace("q", "a"))

    assert pipeline.tick() == 0
    clock.append(2 * SECOND)
    assert pipeline.tick() == 1
    assert [r.sample_reason for r in save.records] == ["sampled"]


def test_scrubber_is_applied_before_save(
    save: ListSave, clock: list[int], make_trace: MakeTrace
) -> None:
    """What reaches save has already been scrubbed."""
    pipeline = pipeline_with(save, clock, scrubber=PiiScrubber(b"0123456789abcdef"))

    pipeline.submit(make_trace("Is jane@example.com covered?", "Yes."))
    pipeline.flush_all()

    [record] = save.records
    assert "jane@example.com" not in record.question
    assert "<EMAIL_" in record.question


def test_failing_scrubber_drops_the_record(
    save: ListSave, clock: list[int], make_trace: MakeTrace
) -> None:
    """A scrubber that raises drops the record (fail closed) and counts scrub_failed."""
    pipeline = pipeline_with(save, clock, scrubber=broken_scrubber)

    pipeline.submit(make_trace("Is jane@example.com covered?", "Yes."))
    assert pipeline.flush_all() == 0

    assert save.records == []
    assert pipeline.stats["scrub_failed"] == 1
    assert pipeline.stats["records"] == 0


def test_non_rag_trace_is_counted_not_saved(save: ListSave, clock: list[int]) -> None:
    """A trace that is not a RAG request is counted as not_rag."""
    pipeline = pipeline_with(save, clock)
    pipeline.submit([IngestSpan("0" * 31 + "1", "0" * 15 + "1", None, "GET /health", 1, 2)])

    assert pipeline.flush_all() == 0
    assert pipeline.stats["not_rag"] == 1


def test_failing_save_keeps_records_until_it_recovers(
    save: ListSave,
    clock: list[int],
    make_trace: MakeTrace,
) -> None:
    """While save fails records wait in the backlog and submit refuses; recovery saves all."""
    pipeline = pipeline_with(save, clock)
    save.failing = True

    pipeline.submit(make_trace("first question", "first answer"))
    pipeline.submit(make_trace("second question", "second answer"))
    assert pipeline.flush_all() == 0
    assert pipeline.saturated
    with pytest.raises(SaturatedError):
        pipeline.submit(make_trace("third question", "third answer"))
    assert pipeline.tick() == 0
    assert save.calls == 2

    save.failing = False
    assert pipeline.tick() == 2

    assert sorted(r.question for r in save.records) == ["first question", "second question"]
    assert not pipeline.saturated
    assert pipeline.stats["records"] == 2
    assert pipeline.stats["lost"] == 0
    pipeline.submit(make_trace("third question", "third answer"))
    assert pipeline.flush_all() == 1


def test_near_the_trace_bound_the_pipeline_refuses_instead_of_evicting(
    save: ListSave, clock: list[int]
) -> None:
    """At 90% of max_traces new spans are refused (503), so no trace is stored incomplete."""
    pipeline = pipeline_with(save, clock, max_traces=10)
    for n in range(9):
        pipeline.submit([IngestSpan(f"{n + 1:032x}", f"{n + 1:016x}", None, "root", 0, 1)])
    assert pipeline.saturated
    with pytest.raises(SaturatedError, match="9 traces wait for assembly"):
        pipeline.submit([IngestSpan(f"{99:032x}", f"{99:016x}", None, "root", 0, 1)])
    assert pipeline._assembler.evicted_total == 0


def test_one_request_cannot_evict_another_clients_traces(save: ListSave, clock: list[int]) -> None:
    """A request's new trace ids count before it is admitted: one export of many new ids
    is refused (503) rather than evicting the traces other clients have in flight, and
    while others wait it may open at most a share of the bound."""
    pipeline = pipeline_with(save, clock, max_traces=100)

    def roots(first: int, count: int) -> list[IngestSpan]:
        return [
            IngestSpan(f"{n:032x}", f"{n:016x}", None, "r", 0, 1)
            for n in range(first, first + count)
        ]

    pipeline.submit(roots(1, 20))  # another client's traces, waiting for their children
    with pytest.raises(SaturatedError, match="one export opens 30 traces while 20 wait"):
        pipeline.submit(roots(1000, 30))
    with pytest.raises(SaturatedError, match="20 traces wait for assembly and the export opens 75"):
        pipeline.submit(roots(2000, 75))
    pipeline.submit(roots(3000, 25))
    assert len(pipeline._assembler) == 45 and pipeline._assembler.evicted_total == 0
    pipeline.flush_all()
    pipeline.submit(roots(4000, 90))  # nothing else waits: up to the bound, at once
    assert pipeline._assembler.evicted_total == 0


def test_buffered_bytes_are_bounded(save: ListSave, clock: list[int]) -> None:
    """Big spans fill the byte budget before the span count: the pipeline says so."""
    pipeline = pipeline_with(save, clock, max_bytes=100_000)
    big = {"input.value": "x" * 60_000}
    pipeline.submit([IngestSpan(f"{1:032x}", f"{1:016x}", None, "root", 0, 1, attributes=big)])
    assert not pipeline.saturated
    pipeline.submit([IngestSpan(f"{2:032x}", f"{2:016x}", None, "root", 0, 1, attributes=big)])
    assert pipeline.saturated
    with pytest.raises(SaturatedError, match="MB of spans wait"):
        pipeline.submit([IngestSpan(f"{3:032x}", f"{3:016x}", None, "root", 0, 1)])


def test_sampling_tallies_hold_no_raw_pii(
    save: ListSave, clock: list[int], make_trace: MakeTrace
) -> None:
    """Sampling counts and dropped-trace rows are taken on scrubbed labels: an e-mail in a
    segment label reaches them only as its pseudonym, the same one every time."""
    from faithmon.ingest.sampler import PolicySampler, SamplingPolicy
    from faithmon.model import DroppedTrace, SamplingTally

    saved: list[tuple[list[SamplingTally], list[DroppedTrace]]] = []
    pipeline = pipeline_with(
        save,
        clock,
        sampler=PolicySampler(
            SamplingPolicy(segment_by=("route",), exclude=(("route", "jane@example.com"),))
        ),
        scrubber=PiiScrubber(b"0123456789abcdef"),
        save_sampling=lambda tallies, dropped: saved.append((list(tallies), list(dropped))),
    )
    for _ in range(2):
        spans = make_trace("q", "a")
        pipeline.submit(
            [
                replace(s, attributes={**s.attributes, "faithmon.label.route": "jane@example.com"})
                for s in spans
            ]
        )
        pipeline.flush_all()
    text = repr(saved)
    assert saved and "jane@example.com" not in text
    segments = {tuple(t.segment.items()) for batch, _ in saved for t in batch}
    [(key, pseudonym)] = {pair for segment in segments for pair in segment}
    assert key == "route" and pseudonym.startswith("<EMAIL_")
    assert [d.segment for _, batch in saved for d in batch] == [{"route": pseudonym}] * 2
