"""The ingest pipeline: spans in, scrubbed and sampled records out to ``save``.

    submit(spans) → assembler → extract → sampler → scrubber → save(records)
                                └→ feedback spans → scrub → save_feedback(items)

Extraction and scrubbing run on the pipeline thread or in worker processes
(``workers.py``); assembly and sampling stay on the thread.

``save`` (the store's writer) raises only when the store fails or hangs; the records
then wait in a bounded backlog, retried each tick. With a spool (``spool.py``) every
accepted export is on disk before ``submit`` returns, settled once its traces are
stored or decided; records past the backlog stay there and are re-read, so the spool
alone bounds what is acknowledged. Without one, a failing store makes the pipeline
saturated (503: exporters retry).
"""

from __future__ import annotations

import itertools
import logging
import threading
import time
from collections import Counter, deque
from collections.abc import Callable, Collection, Iterable, Sequence

from ..errors import SaturatedError, TooLargeToAdmit
from ..model import (
    Feedback,
    RagRecord,
    Sampler,
    SaveFeedbackFn,
    SaveFn,
    SaveSamplingFn,
    Scrubber,
)
from .assemble import Assembled, Request, TraceAssembler, measure
from .build import finish_feedback
from .memory import Releaser
from .quiet import Throttle
from .spans import TraceItem
from .spool import Spool, encode
from .tally import SamplingBook
from .workers import make_stages

logger = logging.getLogger(__name__)
SLOW_SAVE_SECONDS = 10.0  # a save longer than this reports the store failing (/healthz)


def _known(stored: Callable[[Collection[str]], set[str]] | None, traces: set[str]) -> set[str]:
    if stored is None or not traces:
        return set()
    try:
        return stored(traces)
    except Exception as exc:  # the store is down: replay all, saves are idempotent
        logger.warning("faithmon: could not ask the store what it holds (%s)", type(exc).__name__)
        return set()


class Pipeline:
    def __init__(
        self,
        save: SaveFn,
        *,
        sampler: Sampler,
        scrubber: Scrubber,
        quiet_seconds: float = 2.0,
        max_traces: int = 10_000,
        max_backlog: int = 10_000,
        clock: Callable[[], int] | None = None,
        save_feedback: SaveFeedbackFn | None = None,
        max_items: int = 500_000,
        save_sampling: SaveSamplingFn | None = None,
        max_bytes: int = 512 * 1024 * 1024,
        save_batch: int = 500,
        spool: Spool | None = None,
        processes: int = 0,
        worker_scrubber: Callable[[], Scrubber] | None = None,
    ) -> None:
        self._save = save
        self._quiet = Throttle(logger)
        self._save_feedback = save_feedback
        self._feedback_backlog: list[Feedback] = []
        self._scrubber = scrubber
        # Extraction and scrubbing: here, or over ``processes`` worker processes, which
        # scrub with what ``worker_scrubber`` makes (else a pickled copy of ``scrubber``).
        self._stages = make_stages(processes, scrubber, worker_scrubber)
        self._assembler = TraceAssembler(
            quiet_seconds, max_traces, clock=clock or time.monotonic_ns, max_bytes=max_bytes
        )
        self._backlog: deque[RagRecord] = deque()
        # With a spool, records the backlog cannot hold stay on disk, unsettled: their
        # ids (with the sampler's reason) are kept, and they are re-read from the spool
        # once the store answers again, not at the next start.
        self._overflow: dict[str, str] = {}
        self._rereading: dict[str, str] = {}
        self._saving_since: float | None = None
        self._max_backlog = max_backlog
        self._max_items = max_items
        self.draining = False
        self._save_batch = save_batch
        self._spool = spool
        self.memory = Releaser()
        self._decided: list[str] = []
        self._lock = threading.Lock()
        # Held while traces are taken and saved, so flush_all() returns only once
        # a background tick that took traces before it has saved them too.
        self._process_lock = threading.Lock()
        self.stats: Counter[str] = Counter()
        self._book = SamplingBook(sampler, scrubber, save_sampling, max_backlog, self.stats)
        self.last_error = ""  # the kind of the last failed save (the heartbeat reports it)
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        # The final save runs on its own thread, so a stop can give up on a hung store.
        self._stopping = threading.Lock()
        self._finisher: threading.Thread | None = None
        self._deadline: float | None = None

    def _full(self, request: Request | None = None) -> str | None:
        return self._assembler.refusal(request, self._max_items)

    @property
    def saturated(self) -> bool:
        """Draining, near a buffer bound, the spool refusing, or (no spool) the store failing."""
        if self.draining or self._full() or (self._spool is None and self.store_failing):
            return True
        if self._spool is not None:  # the spool, not memory, bounds what is acknowledged
            return self._spool.refusing is not None
        return len(self._backlog) >= self._max_backlog

    @property
    def store_failing(self) -> bool:
        """Records or feedback wait because the last save failed, or one hangs."""
        since = self._saving_since  # a silent database fails no save: it holds one
        slow = since is not None and time.monotonic() - since > SLOW_SAVE_SECONDS
        return slow or bool(self._backlog or self._overflow or self._feedback_backlog)

    def drain(self, seconds: float | None = None) -> bool:
        """Refuse new spans from now on (503) and save everything buffered, for at most
        ``seconds``: False when the saves outlast it (a hung database). What is not saved
        then stays in the spool for the next start."""
        self.draining = True
        if seconds is not None:
            self._deadline = time.monotonic() + seconds
        return self.stop()

    def hurry(self) -> None:
        """Stop waiting for saves now (a second signal): ``stop`` returns at once."""
        self._deadline = time.monotonic()

    def submit(self, items: Sequence[TraceItem]) -> None:
        """Buffer spans and log records for assembly; SaturatedError (503) while they
        cannot be taken now, TooLargeToAdmit (413) when they never could."""
        if self.draining:
            raise SaturatedError("faithmon is shutting down")
        if self._spool is None and (self._backlog or self._feedback_backlog):
            raise SaturatedError(f"{len(self._backlog)} records wait for the store")
        request = measure(items)
        with self._lock:
            too_large = self._assembler.never_fits(request)
            if too_large is not None:
                raise TooLargeToAdmit(too_large)
            full = self._full(request)
            if full is not None:
                raise SaturatedError(full)
            # Counted by every check from now on, though added only after the spool
            # write, which runs unlocked so that concurrent requests share its fsync.
            held = self._assembler.reserve(request)
        try:
            if self._spool is not None and items:
                self._spool.append(encode(items), {item.trace_id for item in items})
        except BaseException:
            with self._lock:
                self._assembler.cancel(held)
            raise
        with self._lock:
            self._assembler.add(items, held)
            self.stats["spans"] += len(items)

    def _settle(self, trace_ids: Iterable[str]) -> None:
        if self._spool is not None:
            self._spool.settle(trace_ids)

    def recover(self, stored: Callable[[Collection[str]], set[str]] | None = None) -> int:
        """Replay what an earlier process left in the spool; returns the spans replayed.

        Called before the receiver starts. ``stored`` names the trace ids the store
        already holds: those are not replayed (nor counted again by sampling). Without
        it, or while the store cannot answer, everything is replayed, and records
        already stored are kept as they are (trace ids are unique).
        """
        if self._spool is None:
            return 0
        replayed = 0
        for segment, items in self._spool.recovered():
            traces = {item.trace_id for item in items}
            done = _known(stored, traces)
            items = [item for item in items if item.trace_id not in done]
            self._spool.hold(segment, traces - done)
            with self._lock:
                self._assembler.add(items)
            replayed += len(items)
            if self._full() is not None:
                self.flush_all()
        if replayed:
            logger.info("faithmon: replayed %d spans from the spool", replayed)
        return replayed

    def tick(self) -> int:
        """Build and save the records of complete traces; returns records saved."""
        with self._process_lock:
            with self._lock:
                traces = self._assembler.pop_ready()
            saved = self._process_in_slices(traces) + self._reread()
        self.memory.observe(self._assembler.bytes_in_flight)
        return saved

    def flush_all(self) -> int:
        """Build and save every buffered trace now (shutdown, the demo, tests)."""
        with self._process_lock:
            with self._lock:
                traces = self._assembler.pop_all()
            saved = self._process_in_slices(traces)
            while self._overflow and not self._backlog:
                saved += self._reread()
            return saved

    def _reread(self) -> int:
        """Rebuild a backlog's worth of overflowed records from the spool, once the store
        has taken the backlog; the sampler's first decision stands."""
        if not self._overflow or self._backlog or self._spool is None:
            return 0
        batch = dict(itertools.islice(self._overflow.items(), self._max_backlog))
        for trace_id in batch:
            del self._overflow[trace_id]
        items = self._spool.items_of(batch)
        assembler = TraceAssembler(0, len(items) + 1)
        assembler.add(items)
        self._rereading = batch
        try:
            return self._process_in_slices(assembler.pop_all())
        finally:
            self._rereading = {}
            self.stats["overflow"] = len(self._overflow)

    def _process_in_slices(self, traces: list[Assembled]) -> int:
        # Slices keep transactions short and make records visible as they are built.
        saved = 0
        for start in range(0, len(traces), self._save_batch):
            saved += self._process(traces[start : start + self._save_batch])
        return saved if traces else self._process([])

    def _save_feedback_items(self, items: list[Feedback]) -> None:
        if self._save_feedback is None:
            self.stats["feedback_ignored"] += len(items)
            return
        pending = self._feedback_backlog + items
        if not pending:
            return
        try:
            self._save_feedback(pending)
        except Exception as exc:
            self._feedback_backlog = pending[-self._max_backlog :]
            self._quiet.warning("f", "faithmon: saving feedback failed (%s); will retry", exc)
            return
        self._feedback_backlog = []
        self.stats["feedback"] += len(pending)

    def _build(self, traces: list[Assembled]) -> tuple[list[RagRecord], list[Feedback], list[str]]:
        """Records to save, feedback to save, and traces that leave nothing to store."""
        feedback: list[Feedback] = []
        decided: list[str] = []  # settled at once
        kept: list[tuple[RagRecord, str]] = []
        for read in self._stages.read(traces):
            feedback.extend(read.feedback)
            # The trace's content stays out of the log: type and size only.
            for what, failed in (("feedback", read.feedback_failed), ("a record", read.failed)):
                if failed is not None:
                    logger.error(
                        "faithmon: could not read %s from %d spans (%s)", what, read.size, failed
                    )
                    self.stats["malformed"] += 1
            if read.record is None:
                if read.failed is None:
                    self.stats["not_rag"] += 1
                decided.append(read.trace_id)
                continue
            try:
                reason = self._rereading.get(read.record.trace_id) or self._book.keep(read.record)
            except Exception as exc:
                logger.error("faithmon: could not sample a record (%s)", type(exc).__name__)
                self.stats["malformed"] += 1
                reason = None
            if reason is None:
                decided.append(read.trace_id)
            else:
                kept.append((read.record, reason))
        records = []
        for finished in self._stages.finish(kept):
            if finished.record is None:
                # Fail closed: an unscrubbed record is never stored. No traceback: an
                # exception's message may quote the text it failed on.
                logger.error(
                    "faithmon: scrubbing failed (%s); trace %s dropped",
                    finished.failed,
                    finished.trace_id,
                )
                self.stats["scrub_failed"] += 1
                decided.append(finished.trace_id)
                continue
            if finished.record.repairs:
                self.stats["repaired"] += 1
            records.append(finished.record)
        kept_feedback, dropped = finish_feedback(feedback, self._scrubber)
        self.stats["feedback_dropped"] += dropped
        return records, kept_feedback, decided

    def _process(self, traces: list[Assembled]) -> int:
        records, feedback, decided = self._build(traces)
        self._save_feedback_items(feedback)
        self._book.save()
        # Feedback waiting for the store keeps its traces in the spool until it is saved.
        if self._spool is not None:
            self._decided.extend(decided)
        if self._decided and not self._feedback_backlog:
            self._settle(self._decided)
            self._decided = []
        pending = list(self._backlog) + records
        if not pending:
            return 0
        self._saving_since = time.monotonic()
        try:
            self._save(pending)
        except Exception as exc:
            self.last_error = type(exc).__name__
            self._backlog = deque(pending[-self._max_backlog :])
            self.stats["backlog"] = len(self._backlog)
            over = pending[: len(pending) - len(self._backlog)]
            if over and self._spool is not None:
                self._overflow.update((r.trace_id, r.sample_reason) for r in over)
                self.stats["overflow"] = len(self._overflow)
            elif over:
                self.stats["lost"] += len(over)
                logger.error("faithmon: backlog full, %d records lost", len(over))
            what = f"saving {len(pending)} records failed"
            self._quiet.warning("r", f"faithmon: {what} (%s); will retry", exc)
            return 0
        finally:
            self._saving_since = None
        self._backlog.clear()
        self.stats["backlog"] = 0
        self._settle(r.trace_id for r in pending)
        self.stats["records"] += len(pending)
        return len(pending)

    def start(self, interval: float = 0.25) -> None:
        """Tick in a background thread until ``stop``."""
        if self._thread is not None:
            return
        self._stop.clear()
        self._stages.start()

        def run() -> None:
            while not self._stop.wait(interval):
                try:
                    self.tick()
                except Exception as exc:
                    logger.error("faithmon: pipeline tick failed (%s)", type(exc).__name__)

        self._thread = threading.Thread(target=run, name="faithmon-pipeline", daemon=True)
        self._thread.start()

    def stop(self) -> bool:
        """Stop ticking and save whatever is still buffered; after ``drain(seconds)`` or
        ``hurry()``, wait no longer than their deadline (False if it passed)."""
        self._stop.set()
        with self._stopping:
            if self._finisher is None:
                self._finisher = threading.Thread(target=self._finish, daemon=True)
                self._finisher.start()
            finisher = self._finisher
        while finisher.is_alive():
            deadline = self._deadline
            # Waits in short steps so that a deadline set meanwhile (hurry) is met.
            wait = 0.1 if deadline is None else min(0.1, deadline - time.monotonic())
            if wait <= 0:
                return False
            finisher.join(wait)
        with self._stopping:
            self._finisher = None if self._finisher is finisher else self._finisher
        return True

    def _finish(self) -> None:
        if self._thread is not None:
            self._thread.join()  # a tick saving now holds the process lock anyway
            self._thread = None
        try:
            self.flush_all()
        finally:
            self._stages.close()
