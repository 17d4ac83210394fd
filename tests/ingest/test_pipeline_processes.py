"""The pipeline with extraction and scrubbing in worker processes: the same records as on
its own thread, through a real receiver, and nothing acknowledged lost when a worker dies."""

from __future__ import annotations

import functools
import hashlib
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

import faithmon_instrumentation as fm
from faithmon.api import server as serving
from faithmon.api.app import create_app
from faithmon.cli import wiring
from faithmon.config import Settings
from faithmon.ingest.build import WORKER_CRASHED, finish
from faithmon.ingest.pipeline import Pipeline
from faithmon.ingest.sampler import KeepAll, PolicySampler, SamplingPolicy
from faithmon.ingest.scrub import PiiScrubber, identity
from faithmon.ingest.spans import IngestLog, IngestSpan
from faithmon.ingest.spool import Spool
from faithmon.ingest.workers import InProcesses, pii_scrubber
from faithmon.model import RagRecord, Scrubber
from tests.ingest.dying import DiesOn, DiesOnce
from tests.ingest.factory import Store, spans, trace_id
from tests.servers import serve_in_thread
from tests.timing import days_ago, wait_for

KEY = b"processes-test-key-0123456789"
EMAIL = "jane.doe@example.com"


def _scrubber_factory() -> functools.partial[Scrubber]:
    return functools.partial(pii_scrubber, KEY, "US", "record", ())


def _record(n: int, question: str) -> RagRecord:
    return RagRecord(trace_id(n), question, "a", (), {}, days_ago(1))


def _spread(n: int) -> str:
    """A trace id whose low bits, which the ratio rule reads, look random."""
    return hashlib.md5(str(n).encode()).hexdigest()


def _traffic() -> list[IngestSpan | IngestLog]:
    """RAG traces (one with an e-mail address), a span of no RAG trace, and a log
    record joined to a trace."""
    items: list[IngestSpan | IngestLog] = []
    for n in range(40):
        question = f"I am {EMAIL}, where is order A{n}?" if n % 7 == 0 else f"Order A{n}?"
        items.extend(spans(_spread(n), question))
    items.append(IngestSpan(_spread(99), "a" * 16, None, "health", 1, 2, {"http.route": "/"}))
    items.append(IngestLog(_spread(3), None, "gen_ai.user.message", 1_500, {"content": "hi"}))
    return items


def _pipeline(save: Store, processes: int, **options: object) -> Pipeline:
    return Pipeline(
        save,
        sampler=PolicySampler(SamplingPolicy(rate=0.5)),
        scrubber=PiiScrubber(KEY),
        quiet_seconds=0,
        processes=processes,
        worker_scrubber=_scrubber_factory(),
        **options,  # type: ignore[arg-type]
    )


def test_worker_processes_build_the_records_the_thread_builds() -> None:
    """Two worker processes store the same records, scrubbed alike and in the same order,
    with the same sampling decisions and counts, as the pipeline thread alone."""
    results = []
    for processes in (0, 2):
        saved: list[RagRecord] = []
        pipeline = _pipeline(Store(), processes)
        pipeline._save = saved.extend
        pipeline.submit(_traffic())
        pipeline.flush_all()
        pipeline.stop()
        results.append((saved, dict(pipeline.stats)))
    (thread_records, thread_stats), (process_records, process_stats) = results
    assert process_records == thread_records
    assert process_stats == thread_stats
    assert 5 < len(thread_records) < 40  # the ratio kept some and dropped others
    assert thread_stats["not_rag"] == 1
    scrubbed = [r for r in process_records if "where is order" in r.question]
    assert scrubbed and all(EMAIL not in r.question for r in scrubbed)


@pytest.mark.parametrize("names", [True, False])
def test_worker_processes_follow_the_names_and_addresses_setting(names: bool) -> None:
    """``FAITHMON_SCRUB_NAMES_ADDRESSES`` reaches the scrubbers the wiring builds in worker
    processes: a name is scrubbed with it on and kept with it off; e-mail either way."""
    environ = {
        "FAITHMON_SCRUB_KEY": KEY.decode(),
        "FAITHMON_SCRUB_NAMES_ADDRESSES": str(names).lower(),
        "FAITHMON_SAMPLE_RATE": "1",
    }
    saved: list[RagRecord] = []
    pipeline = wiring.make_pipeline(
        Settings.from_env(environ), saved.extend, quiet_seconds=0, processes=2
    )
    pipeline.submit(spans(trace_id(1), f"Hi, my name is Priya Shah, I am {EMAIL}."))
    pipeline.flush_all()
    pipeline.stop()
    [record] = saved
    assert EMAIL not in record.question
    assert ("Priya Shah" in record.question) is not names
    assert ("<PERSON_" in record.question) is names


SCRUBBING = {
    "names off": {"FAITHMON_SCRUB_NAMES_ADDRESSES": "false"},
    "plug-in": {"FAITHMON_SCRUB_DETECTORS": "tests.ingest.plugin_detector:loyalty_cards"},
    "phone region": {"FAITHMON_SCRUB_PHONE_REGION": "GB"},
    "tenant scope": {"FAITHMON_SCRUB_SCOPE": "tenant"},
}


def _scrubbed(environ: dict[str, str]) -> list[str]:
    """The questions stored through the wiring's pipeline with ``environ`` set."""
    settings = Settings.from_env(
        {"FAITHMON_SCRUB_KEY": KEY.decode(), "FAITHMON_SAMPLE_RATE": "1", **environ}
    )
    saved: list[RagRecord] = []
    pipeline = wiring.make_pipeline(
        settings, saved.extend, quiet_seconds=0, processes=settings.ingest_processes
    )
    # A phone number without its country code reads as another number in another region.
    question = f"Hi, my name is Priya Shah, I am {EMAIL}, card LC-204816, call (415) 555-0100."
    pipeline.submit(spans(trace_id(1), question))
    pipeline.flush_all()
    pipeline.stop()
    return [record.question for record in saved]


@pytest.mark.parametrize("changed", list(SCRUBBING.values()), ids=list(SCRUBBING))
def test_a_scrubbing_setting_acts_alike_in_thread_and_in_processes(
    changed: dict[str, str],
) -> None:
    """A setting that changes scrubbing changes it the same way with
    FAITHMON_INGEST_PROCESSES=0 and =2: one factory builds both scrubbers."""
    by_processes = {n: _scrubbed({**changed, "FAITHMON_INGEST_PROCESSES": n}) for n in ("0", "2")}
    assert by_processes["0"] == by_processes["2"]
    # And it does change something, or the comparison would prove nothing.
    assert by_processes["0"] != _scrubbed({"FAITHMON_INGEST_PROCESSES": "0"})


@pytest.fixture
def shim_to(tmp_path: Path) -> Iterator[tuple[str, Store, Pipeline, Spool]]:
    store = Store()
    spool = Spool(tmp_path / "spool", 64 << 20)
    pipeline = _pipeline(store, 2, spool=spool)
    pipeline._book._sampler = KeepAll()
    app = create_app(pipeline, max_body_bytes=8 << 20, run_pipeline=True)
    # faithmon's own uvicorn settings: the lifespan starts the pipeline and its workers.
    with serve_in_thread(app, serving.config) as url:
        fm.setup(endpoint=url, service_name="processes-app")
        try:
            yield url, store, pipeline, spool
        finally:
            fm.shutdown()
    spool.close()


def test_the_shim_through_a_receiver_to_worker_processes(
    shim_to: tuple[str, Store, Pipeline, Spool],
) -> None:
    """Traces the OTLP exporter sends to the receiver on 127.0.0.1 are stored once each,
    scrubbed by the workers, and settled in the spool once stored."""
    _, store, pipeline, spool = shim_to
    for n in range(30):
        with fm.rag_span(f"I am {EMAIL}, where is order A{n}?", route="orders") as rag:
            rag.record_retrieval([f"Order A{n} shipped. Mail {EMAIL}."], retriever="bm25")
            rag.record_answer(f"Order A{n} shipped.")
    assert fm.flush()
    wait_for(lambda: len(store.records) == 30, 60, "30 records from the worker processes")
    records = list(store.records.values())
    assert all(EMAIL not in r.question and EMAIL not in r.chunks[0].text for r in records)
    assert {r.labels.get("route") for r in records} == {"orders"}
    assert pipeline.stats["records"] == 30
    wait_for(lambda: not spool._traces, 10, "the spool to settle every stored trace")


def test_a_worker_that_dies_is_replaced_and_its_batch_stored(tmp_path: Path) -> None:
    """A worker process that dies mid-batch takes nothing with it: the pool is started
    again, the batch runs again, and every record is stored once, in order."""
    store = Store()
    spool = Spool(tmp_path / "spool", 64 << 20)
    pipeline = Pipeline(
        store,
        sampler=KeepAll(),
        scrubber=identity,
        quiet_seconds=0,
        spool=spool,
        processes=2,
        worker_scrubber=functools.partial(DiesOnce, tmp_path / "died"),
    )
    pipeline.submit([item for n in range(20) for item in spans(trace_id(n + 1))])
    assert pipeline.flush_all() == 20
    pipeline.stop()
    assert (tmp_path / "died").exists()
    assert sorted(store.records) == [trace_id(n + 1) for n in range(20)]
    assert pipeline.stats["scrub_failed"] == 0 and not spool._traces
    spool.close()


def test_a_trace_that_kills_every_worker_is_given_up_alone(tmp_path: Path) -> None:
    """A trace whose scrubbing takes its worker down each time is dropped (fail closed),
    found by running its batch trace by trace; the rest of the batch is stored."""
    stages = InProcesses(2, functools.partial(DiesOn, "poison"))
    records = [_record(n, "poison" if n == 3 else f"q{n}") for n in range(6)]
    finished = stages.finish([(r, "sampled") for r in records])
    stages.close()
    assert [f.trace_id for f in finished] == [r.trace_id for r in records]
    assert [f.failed for f in finished] == [None, None, None, WORKER_CRASHED, None, None]
    expected = [finish(r, "sampled", identity).record for r in records]
    assert [f.record for f in finished] == [*expected[:3], None, *expected[4:]]
    assert stages.crashed == 1 and stages.restarts >= 3


# The stand-in receiver blocks until the test kills it (no timer: it is killed, not awaited).
RECEIVER = """
import functools, signal
from faithmon.ingest.scrub import identity
from faithmon.ingest.workers import InProcesses, _itself
stages = InProcesses(2, functools.partial(_itself, identity))
stages.start()
print(" ".join(str(pid) for pid in stages._pool._processes), flush=True)
signal.pause()
"""


def _gone(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return True
    return state in ("Z", "X")  # exited, not yet reaped by whoever adopted it


def test_workers_exit_when_their_receiver_is_killed() -> None:
    """A receiver killed outright (SIGKILL) leaves no worker behind: orphans would keep
    its output pipes open and wait on its task queue for ever."""
    with subprocess.Popen(
        [sys.executable, "-c", RECEIVER], stdout=subprocess.PIPE, text=True
    ) as receiver:
        assert receiver.stdout is not None
        try:
            workers = [int(pid) for pid in receiver.stdout.readline().split()]
            assert len(workers) == 2 and not any(_gone(pid) for pid in workers)
        finally:
            receiver.kill()
            receiver.wait(timeout=30)
        wait_for(lambda: all(_gone(pid) for pid in workers), 20, "the workers to exit")
        assert receiver.stdout.read() == ""  # and the pipe is closed: nobody holds it


def test_pickled_records_keep_every_field() -> None:
    """What crosses to a worker and back is the record as it was (slots pickle whole)."""
    import pickle

    record = replace(_record(1, "q"), labels={"route": "r"}, late=True, repairs=("x",))
    assert pickle.loads(pickle.dumps(record)) == record
