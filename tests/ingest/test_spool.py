"""The durable spool: acknowledged spans are on disk, replayed after a crash, then deleted."""

from __future__ import annotations

import logging
import math
import os
import stat
import subprocess
import sys
import textwrap
import threading
from collections.abc import Collection, Sequence
from pathlib import Path

import pytest

from faithmon.errors import ConfigError, SaturatedError
from faithmon.ingest import pipeline as pipeline_module
from faithmon.ingest.pipeline import Pipeline
from faithmon.ingest.quiet import Throttle
from faithmon.ingest.sampler import KeepAll
from faithmon.ingest.scrub import identity
from faithmon.ingest.spans import IngestEvent, IngestLog, IngestSpan
from faithmon.ingest.spool import Spool, decode, encode
from faithmon.model import RagRecord
from tests.ingest.factory import Store, spans, trace_id
from tests.timing import wait_for

TRACE = "0af7651916cd43dd8448eb211c80319c"


def pipeline(store: Store, spool: Spool) -> Pipeline:
    return Pipeline(store, sampler=KeepAll(), scrubber=identity, spool=spool, quiet_seconds=0)


def crash(spool: Spool) -> None:
    """What SIGKILL leaves: files closed by the kernel, nothing deleted, the lock released."""
    spool._current.file.close()
    spool._lock_file.close()


def test_encode_and_decode_keep_every_field() -> None:
    """Spans, events and log records read back from the spool as they were written."""
    span = IngestSpan(
        TRACE,
        "b7ad6b7169203331",
        None,
        "rag.request",
        1,
        2,
        {"a": [1, 2.5, "x\ud800"], "n": math.inf, "kv": {"k": None}},
        {"service.name": "s"},
        error=True,
        dropped_attributes=3,
        events=(IngestEvent("db.query.result", 5, {"id": "d1"}),),
        dropped_events=1,
        trace_state="ot=th:8",
    )
    log = IngestLog(TRACE, None, "gen_ai.choice", 7, {"message": "hi"}, {"x": 1})
    assert decode(encode([span, log])) == [span, log]


def test_a_crashed_receiver_replays_what_it_acknowledged(tmp_path: Path) -> None:
    """Spans appended but never stored are replayed at the next start, once."""
    first = Spool(tmp_path, max_bytes=10 << 20)
    store = Store()
    receiver = pipeline(store, first)
    for n in range(5):
        receiver.submit(spans(trace_id(n)))
    crash(first)

    again = Spool(tmp_path, max_bytes=10 << 20)
    restarted = pipeline(store, again)
    assert restarted.recover() == 10
    restarted.flush_all()
    assert sorted(store.records) == [trace_id(n) for n in range(5)]
    assert store.records[trace_id(0)].question == "Where is order A17?"
    again.close()

    # Everything stored: a third start has nothing to replay.
    third = Spool(tmp_path, max_bytes=10 << 20)
    assert pipeline(store, third).recover() == 0
    third.close()


def test_stored_traces_leave_no_segment_behind(tmp_path: Path) -> None:
    """Once every trace of a segment is stored, the segment file is deleted."""
    spool = Spool(tmp_path, max_bytes=10 << 20, segment_bytes=2_000)
    store = Store()
    receiver = pipeline(store, spool)
    for n in range(40):
        receiver.submit(spans(trace_id(n)))
    assert len(list(tmp_path.glob("*.spool"))) > 3
    receiver.flush_all()
    assert len(store.records) == 40
    # The current segment, still open, rolled to an empty one: no content rests on disk.
    [current] = tmp_path.glob("*.spool")
    assert current.stat().st_size == 0
    spool.close()
    assert list(tmp_path.glob("*.spool")) == []


def test_the_receiver_accepts_while_the_database_is_down(tmp_path: Path) -> None:
    """A failing store does not make the receiver refuse: spans go to the spool, then the store."""
    spool = Spool(tmp_path, max_bytes=10 << 20)
    store = Store()
    store.down = True
    receiver = pipeline(store, spool)
    for n in range(20):
        receiver.submit(spans(trace_id(n)))
        receiver.tick()
    assert store.records == {}
    assert receiver.store_failing and not receiver.saturated
    store.down = False
    receiver.tick()
    assert len(store.records) == 20
    assert not receiver.store_failing
    spool.close()


def test_a_full_spool_answers_saturated(tmp_path: Path) -> None:
    """Past its bound the spool refuses, and the pipeline buffers nothing of the refused export."""
    spool = Spool(tmp_path, max_bytes=2_000)
    store = Store()
    store.down = True
    receiver = pipeline(store, spool)
    with pytest.raises(SaturatedError, match="spool is full"):
        for n in range(50):
            receiver.submit(spans(trace_id(n)))
    accepted = receiver.stats["spans"]
    assert 0 < accepted < 100
    store.down = False
    receiver.flush_all()
    assert len(store.records) == accepted // 2
    spool.close()


def test_a_torn_or_corrupt_entry_is_skipped(tmp_path: Path) -> None:
    """A crash mid-write leaves a torn tail; a flipped byte fails the checksum; the rest replays."""
    spool = Spool(tmp_path, max_bytes=10 << 20)
    receiver = pipeline(Store(), spool)
    for n in range(3):
        receiver.submit(spans(trace_id(n)))
    crash(spool)
    [segment] = tmp_path.glob("*.spool")
    data = bytearray(segment.read_bytes())
    entry = len(data) // 3
    data[entry + 20] ^= 0xFF  # inside the second entry's payload
    segment.write_bytes(bytes(data) + data[:30])  # and a torn copy of the first header

    store = Store()
    again = Spool(tmp_path, max_bytes=10 << 20)
    replaying = pipeline(store, again)
    replaying.recover()
    replaying.flush_all()
    assert sorted(store.records) == [trace_id(0), trace_id(2)]
    assert again.skipped == 2
    again.close()


def test_one_folder_serves_one_receiver(tmp_path: Path) -> None:
    """A second receiver on the same spool folder is refused with one line naming the
    setting and the flag that give it a folder of its own."""
    spool = Spool(tmp_path, max_bytes=1 << 20)
    with pytest.raises(ConfigError, match="in use by another receiver") as refused:
        Spool(tmp_path, max_bytes=1 << 20)
    assert "FAITHMON_SPOOL_DIR or `faithmon serve --spool-dir`" in str(refused.value)
    spool.close()
    Spool(tmp_path, max_bytes=1 << 20).close()


def test_a_spool_folder_that_cannot_be_made_is_one_line(tmp_path: Path) -> None:
    """A path under a file names the setting and the cause."""
    (tmp_path / "file").write_text("")
    with pytest.raises(ConfigError, match="FAITHMON_SPOOL_DIR: cannot use"):
        Spool(tmp_path / "file" / "spool", max_bytes=1 << 20)


def test_a_replay_skips_traces_the_store_already_holds(tmp_path: Path) -> None:
    """Traces stored before the crash are not replayed; a store that cannot answer means all
    are replayed (saves are idempotent)."""
    for folder, stored, replayed in (("up", True, 4), ("down", False, 10)):
        first = Spool(tmp_path / folder, max_bytes=10 << 20)
        store = Store()
        receiver = pipeline(store, first)
        for n in range(5):
            receiver.submit(spans(trace_id(n)))
        crash(first)

        def ask(ids: Collection[str], up: bool = stored) -> set[str]:
            if not up:
                raise ConnectionError("database is down")
            return {trace_id(n) for n in range(3)} & set(ids)

        again = Spool(tmp_path / folder, max_bytes=10 << 20)
        restarted = pipeline(store, again)
        assert restarted.recover(ask) == replayed
        assert restarted.flush_all() == replayed // 2
        again.close()
        assert list((tmp_path / folder).glob("*.spool")) == []


def test_a_folder_named_like_a_segment_does_not_stop_a_start(tmp_path: Path) -> None:
    """Something in the spool folder with a segment's name that is no file (a folder an
    operator or a volume made) is passed over: the receiver starts and spools."""
    (tmp_path / f"{7:012d}.spool").mkdir()
    spool = Spool(tmp_path, max_bytes=10 << 20)
    store = Store()
    receiver = pipeline(store, spool)
    assert receiver.recover() == 0
    receiver.submit(spans(trace_id(1)))
    receiver.flush_all()
    assert list(store.records) == [trace_id(1)]
    spool.close()


def test_an_outage_is_one_warning_per_interval_not_one_per_tick(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Every tick of an outage fails to save; the log says so once, then at most once per
    interval, with how many failures it held back."""
    spool = Spool(tmp_path, max_bytes=10 << 20)
    store = Store()
    store.down = True
    receiver = pipeline(store, spool)
    caplog.set_level(logging.WARNING, logger="faithmon")
    for n in range(40):
        receiver.submit(spans(trace_id(n)))
        receiver.tick()
    failures = [r.getMessage() for r in caplog.records if "records failed" in r.getMessage()]
    assert len(failures) == 1 and "will retry" in failures[0]
    store.down = False
    receiver.tick()
    assert len(store.records) == 40
    spool.close()


def test_the_throttle_says_what_it_held_back() -> None:
    """After the interval the next warning says how many it held back, and when."""
    clock = [0.0]
    logged: list[str] = []

    class Capture(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            logged.append(record.getMessage())

    log = logging.getLogger("faithmon.test.throttle")
    log.addHandler(Capture())
    throttle = Throttle(log, interval=30, clock=lambda: clock[0])
    for second in range(0, 61, 1):
        clock[0] = float(second)
        throttle.warning("r", "faithmon: saving failed (%s)", ConnectionError("secret row"))
    assert logged == [
        "faithmon: saving failed (ConnectionError)",
        "faithmon: saving failed (ConnectionError) (29 more like it in 30 s)",
        "faithmon: saving failed (ConnectionError) (29 more like it in 30 s)",
    ]


def test_a_quiet_receiver_keeps_no_raw_content_on_disk(tmp_path: Path) -> None:
    """Unscrubbed content leaves the disk as soon as its trace is stored, without waiting
    for a megabyte of traffic or a clean stop; segments are readable by the owner only."""
    spool = Spool(tmp_path, max_bytes=10 << 20)
    store = Store()
    receiver = pipeline(store, spool)
    receiver.submit(spans(trace_id(1), question="Mail ana@example.com about card 4111"))
    [segment] = tmp_path.glob("*.spool")
    assert stat.S_IMODE(segment.stat().st_mode) == 0o600
    assert b"ana@example.com" in segment.read_bytes()
    receiver.flush_all()
    assert list(store.records) == [trace_id(1)]
    for left in tmp_path.glob("*.spool"):
        assert left.stat().st_size == 0
        assert stat.S_IMODE(left.stat().st_mode) == 0o600
    spool.close()


def test_records_past_the_backlog_are_stored_without_a_restart(tmp_path: Path) -> None:
    """In a long outage records beyond what memory holds stay in the spool and are re-read
    from it when the store answers again: every acknowledged trace is stored, none lost."""
    spool = Spool(tmp_path, max_bytes=10 << 20)
    store = Store()
    store.down = True
    receiver = Pipeline(
        store, sampler=KeepAll(), scrubber=identity, spool=spool, quiet_seconds=0, max_backlog=10
    )
    for n in range(35):
        receiver.submit(spans(trace_id(n)))  # never refused: the spool bounds acceptance
        receiver.tick()
    assert receiver.store_failing and not receiver.saturated
    assert receiver.stats["lost"] == 0
    store.down = False
    receiver.tick()
    receiver.flush_all()
    assert sorted(store.records) == [trace_id(n) for n in range(35)]
    assert store.records[trace_id(0)].question == "Where is order A17?"
    assert not receiver.store_failing
    spool.close()
    assert list(tmp_path.glob("*.spool")) == []


_FULL_DISK = """
import resource, signal, sys
from faithmon.errors import SaturatedError
from faithmon.ingest.spool import Spool, encode
from tests.ingest.factory import spans, trace_id

spool = Spool(sys.argv[1], max_bytes=10 << 20)
# The disk fills mid-entry: the kernel writes what fits (a short write), then refuses.
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
resource.setrlimit(resource.RLIMIT_FSIZE, (3_000, resource.RLIM_INFINITY))
acknowledged = 0
try:
    for n in range(100):
        spool.append(encode(spans(trace_id(n), question="q" * 300)), {trace_id(n)})
        acknowledged += 1
except SaturatedError as exc:
    print(acknowledged, spool.refusing or "", sep="\t")
    sys.stdout.flush()
    import os
    os._exit(0)  # a crash right after: no clean stop
"""


def test_a_short_write_on_a_full_disk_is_refused_and_cut_back(tmp_path: Path) -> None:
    """A write the disk cuts short is never acknowledged, and the segment is cut back to its
    last whole entry: after a crash every acknowledged entry replays and none is torn."""
    run = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(_FULL_DISK), str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=Path(__file__).parents[2],
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
    )
    assert run.returncode == 0, run.stderr
    acknowledged, refusing = run.stdout.strip().split("\t")
    assert 0 < int(acknowledged) < 100
    assert "cannot be written" in refusing
    again = Spool(tmp_path, max_bytes=10 << 20)
    items = [item for _, batch in again.recovered() for item in batch]
    assert again.skipped == 0
    assert len({item.trace_id for item in items}) == int(acknowledged)
    again.close()


def test_healthz_reports_a_spool_that_refuses(tmp_path: Path) -> None:
    """While the spool refuses (full), the pipeline reports itself saturated, so /healthz
    answers 503 rather than ok while every export gets 503; room made clears it."""
    spool = Spool(tmp_path, max_bytes=3_000, segment_bytes=1_000)
    store = Store()
    store.down = True
    receiver = pipeline(store, spool)
    with pytest.raises(SaturatedError):
        for n in range(50):
            receiver.submit(spans(trace_id(n)))
    assert receiver.saturated
    store.down = False
    receiver.flush_all()
    assert not receiver.saturated
    spool.close()


class HungStore(Store):
    """A store whose save never returns until released: a blackholed database."""

    def __init__(self) -> None:
        super().__init__()
        self.entered = threading.Event()
        self.release = threading.Event()

    def __call__(self, records: Sequence[RagRecord]) -> None:
        self.entered.set()
        self.release.wait(60)
        super().__call__(records)


def test_a_stop_gives_up_on_a_hung_store_at_its_deadline(tmp_path: Path) -> None:
    """drain(seconds) returns False once the deadline passes with a save still waiting;
    hurry() (a second signal) ends a drain that has no deadline; the spool keeps it all."""
    for bounded in (True, False):
        spool = Spool(tmp_path / str(bounded), max_bytes=10 << 20)
        store = HungStore()
        receiver = pipeline(store, spool)
        receiver.submit(spans(trace_id(1)))
        receiver.start(interval=0.01)
        assert store.entered.wait(30)
        if bounded:
            assert receiver.drain(0.2) is False
        else:
            threading.Timer(0.2, receiver.hurry).start()
            assert receiver.drain() is False
        assert store.records == {}
        assert len(spool.items_of({trace_id(1)})) == 2  # still on disk for the next start
        store.release.set()
        spool.close()


def test_a_save_that_hangs_reports_the_store_failing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A silent database fails no save, it holds one: past the bound the pipeline reports
    the store failing (/healthz: degraded) until the save returns."""
    monkeypatch.setattr(pipeline_module, "SLOW_SAVE_SECONDS", 0.05)
    spool = Spool(tmp_path, max_bytes=10 << 20)
    store = HungStore()
    receiver = pipeline(store, spool)
    receiver.submit(spans(trace_id(1)))
    receiver.start(interval=0.01)
    assert store.entered.wait(30)
    wait_for(lambda: receiver.store_failing, 30, "the hung save to count as failing")
    assert not receiver.saturated  # the spool still takes exports
    store.release.set()
    wait_for(lambda: not receiver.store_failing, 30, "the save to return")
    receiver.stop()
    assert list(store.records) == [trace_id(1)]
    spool.close()
