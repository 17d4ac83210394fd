"""Ingest's CPU-heavy steps, extraction and scrubbing, on the pipeline thread or in
worker processes (``FAITHMON_INGEST_PROCESSES``).

The pipeline thread hands each batch of assembled traces to ``read`` and the records
its sampler keeps to ``finish``; ``InThread`` runs them there, ``InProcesses`` splits
the batch over a pool of processes and returns the results in the batch's order, so
records are saved in the order they would be without it. Assembly and tail sampling
stay on the pipeline thread: both need every span of a trace, and the sampler's
counts and buckets are one per receiver. Decoding stays in the receiver's threads:
the spans it makes would cost as much to send to a process as to decode.

A worker that dies (killed, out of memory, a fault in native code) breaks the pool:
the batch runs again on a fresh pool, then trace by trace, and a trace that takes a
worker down by itself is given up as malformed (``build.WORKER_CRASHED``), so one
poison trace cannot stop ingest. Nothing acknowledged is lost meanwhile: the traces
stay with the pipeline thread until they are saved, and in the spool until then.

Workers are spawned, not forked: the receiver runs threads, which a fork would copy
mid-state (and a fork server outlives a receiver killed outright). They ignore SIGINT,
so Ctrl-C stops the receiver, which drains through the pool before it closes it, and
on Linux the kernel ends them with a receiver that died without a word.
"""

from __future__ import annotations

import ctypes
import functools
import importlib
import logging
import math
import multiprocessing
import os
import signal
import sys
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Protocol, TypeVar

from ..errors import ConfigError
from ..model import RagRecord, Scrubber
from .assemble import Assembled
from .build import Finished, Read, crashed_finish, crashed_read, finish, read
from .detectors_common import Detector

logger = logging.getLogger(__name__)

T = TypeVar("T")
R = TypeVar("R")
Kept = tuple[RagRecord, str]
"""A record the sampler kept, with the reason it gives."""

# Parts per process and batch: enough that a slow part does not leave a process idle,
# few enough that sending each costs little.
_PARTS_PER_PROCESS = 4
_MIN_PART = 8
_PR_SET_PDEATHSIG = 1


def pii_scrubber(
    key: bytes,
    phone_region: str,
    scope: str,
    detectors: Sequence[str] = (),
    names_and_addresses: bool = True,
) -> Scrubber:
    """The PII scrubber, built from plain values so that a worker process can build its
    own (a detector is a closure, which does not pickle); ``detectors`` are plug-ins named
    ``module:callable``. The pipeline thread's is built the same way (see the wiring)."""
    from .scrub import PiiScrubber

    return PiiScrubber(
        key,
        phone_region,
        scope=scope,  # type: ignore[arg-type]
        extra_detectors=[_plug_in(name) for name in detectors],
        names_and_addresses=names_and_addresses,
    )


def _plug_in(name: str) -> Detector:
    module_name, _, attribute = name.partition(":")
    try:
        detector = getattr(importlib.import_module(module_name), attribute)
    except (ImportError, AttributeError, ValueError) as exc:
        raise ConfigError(f"FAITHMON_SCRUB_DETECTORS: cannot load {name!r} ({exc})") from None
    if not callable(detector):
        raise ConfigError(f"FAITHMON_SCRUB_DETECTORS: {name!r} is not callable")
    return detector  # type: ignore[no-any-return]


class Stages(Protocol):
    def start(self) -> None: ...

    def read(self, traces: Sequence[Assembled]) -> list[Read]: ...

    def finish(self, kept: Sequence[Kept]) -> list[Finished]: ...

    def close(self) -> None: ...


class InThread:
    """The steps on the calling thread."""

    def __init__(self, scrubber: Scrubber) -> None:
        self._scrubber = scrubber

    def start(self) -> None:
        pass

    def read(self, traces: Sequence[Assembled]) -> list[Read]:
        return [read(trace) for trace in traces]

    def finish(self, kept: Sequence[Kept]) -> list[Finished]:
        return [finish(record, reason, self._scrubber) for record, reason in kept]

    def close(self) -> None:
        pass


# A worker process's own scrubber, made once as it starts.
_scrubber: Scrubber | None = None


def _start(make_scrubber: Callable[[], Scrubber]) -> None:
    global _scrubber
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _die_with_parent()
    _scrubber = make_scrubber()


def _die_with_parent() -> None:
    # A receiver killed outright (SIGKILL, OOM) sends no shutdown: its workers would wait
    # on the task queue for ever, holding its stdout and stderr open. Linux kills them
    # with it (PR_SET_PDEATHSIG); elsewhere they wait to be killed. The signal comes when
    # the thread that started the worker ends: a pool restarted on the pipeline thread
    # goes with that thread at stop, and a batch after it starts a new pool.
    if not sys.platform.startswith("linux"):
        return
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    except (OSError, AttributeError):
        return
    if os.getppid() == 1:  # the receiver died before the call
        os._exit(0)


def _itself(scrubber: Scrubber) -> Scrubber:
    return scrubber


def _ready(_: int) -> int:
    return os.getpid()


def _read_part(traces: Sequence[Assembled]) -> list[Read]:
    return [read(trace) for trace in traces]


def _finish_part(kept: Sequence[Kept]) -> list[Finished]:
    assert _scrubber is not None, "the worker was started without a scrubber"
    return [finish(record, reason, _scrubber) for record, reason in kept]


class InProcesses:
    """The steps in a pool of ``processes`` worker processes, started on first use.

    ``make_scrubber`` is picklable and makes the scrubber each worker scrubs with.
    """

    def __init__(self, processes: int, make_scrubber: Callable[[], Scrubber]) -> None:
        if processes < 1:
            raise ValueError("processes must be at least 1")
        self.processes = processes
        self._initargs = (make_scrubber,)
        self._pool: ProcessPoolExecutor | None = None
        self.restarts = 0
        self.crashed = 0

    def _executor(self) -> ProcessPoolExecutor:
        if self._pool is None:
            self._pool = ProcessPoolExecutor(
                self.processes,
                multiprocessing.get_context("spawn"),
                initializer=_start,
                initargs=self._initargs,
            )
        return self._pool

    def start(self) -> None:
        """Start the workers now and wait until each has built its scrubber, so the first
        batch does not pay for it."""
        try:
            list(self._executor().map(_ready, range(self.processes)))
        except BrokenProcessPool:
            self._restart()

    def _restart(self) -> None:
        self.restarts += 1
        logger.warning("faithmon: an ingest worker process died; starting a new pool")
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None

    def _split(self, items: Sequence[T]) -> list[Sequence[T]]:
        parts = max(1, min(self.processes * _PARTS_PER_PROCESS, len(items) // _MIN_PART))
        size = math.ceil(len(items) / parts)
        return [items[start : start + size] for start in range(0, len(items), size)]

    def _map(
        self,
        work: Callable[[Sequence[T]], list[R]],
        items: Sequence[T],
        crashed: Callable[[T], R],
    ) -> list[R]:
        if not items:
            return []
        for _ in range(2):
            try:
                parts = self._executor().map(work, self._split(items))
                return [result for part in parts for result in part]
            except BrokenProcessPool:
                self._restart()
        # Twice broken: one item at a time finds the one that takes its worker down.
        results: list[R] = []
        for item in items:
            try:
                results.extend(self._executor().submit(work, [item]).result())
            except BrokenProcessPool:
                self._restart()
                self.crashed += 1
                results.append(crashed(item))
        return results

    def read(self, traces: Sequence[Assembled]) -> list[Read]:
        return self._map(_read_part, traces, crashed_read)

    def finish(self, kept: Sequence[Kept]) -> list[Finished]:
        return self._map(_finish_part, kept, lambda item: crashed_finish(*item))

    def close(self) -> None:
        """Stop the workers (a later call starts a new pool)."""
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None


def make_stages(
    processes: int,
    scrubber: Scrubber,
    factory: Callable[[], Scrubber] | None = None,
) -> Stages:
    """In-thread for 0 or 1 processes (a single worker would only add the sending); else
    workers scrubbing with what ``factory`` makes, or with a pickled ``scrubber``."""
    if processes <= 1:
        return InThread(scrubber)
    return InProcesses(processes, factory or functools.partial(_itself, scrubber))
