"""The worker process: each job of ``faithmon.jobs`` on its interval (APScheduler), its
heartbeat file and its signals.

On SIGTERM or SIGINT (Ctrl-C) the schedule ends and ``STOPPING`` is set, so a scoring
run in progress saves the calls in flight and gives back what it had queued; the process
then exits 0 with no traceback, as ``faithmon serve`` does. A second signal exits at once.
The settings that pick the jobs and their intervals are wired in
``faithmon.cli.worker_process``.
"""

from __future__ import annotations

import logging
import os
import signal
import threading
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path

from apscheduler.jobstores.base import JobLookupError
from apscheduler.schedulers.blocking import BlockingScheduler

from .jobs import STOPPING

logger = logging.getLogger(__name__)


def beat(path: str) -> None:
    """Write the heartbeat: the time now, which ``heartbeat_age`` reads."""
    Path(path).write_text(f"{time.time():.3f}\n")


def heartbeat_age(path: str) -> float | None:
    """Seconds since the heartbeat was written; None when there is none to read."""
    try:
        written = float(Path(path).read_text().strip())
    except (OSError, ValueError):
        return None
    return max(0.0, time.time() - written)


def run(
    jobs: Sequence[tuple[Callable[[], object], float]],
    scheduler: BlockingScheduler | None = None,
) -> None:
    """Run each (job, interval seconds) on its schedule until interrupted."""
    scheduler = scheduler or BlockingScheduler(timezone=UTC)

    def stop(signum: int, frame: object) -> None:
        # SIGTERM (docker stop, Kubernetes) or Ctrl-C ends the schedule; a scoring run in
        # progress saves the calls in flight and gives back what it had queued.
        if STOPPING.is_set():
            # Asked twice: the jobs still running are left (their leases expire).
            logger.warning("faithmon: a second signal: the worker exits now")
            os._exit(128 + signum)
        logger.info("faithmon: worker stopping on signal %d", signum)
        STOPPING.set()
        # From another thread: the handler runs on the main thread, maybe while it is
        # inside the scheduler holding its locks, and shutting down here waits on them.
        threading.Thread(
            target=scheduler.shutdown, kwargs={"wait": False}, name="faithmon-stop", daemon=True
        ).start()

    running = _Running()
    # Ctrl-C too, rather than a KeyboardInterrupt out of whatever the main thread runs.
    before = {signum: signal.signal(signum, stop) for signum in (signal.SIGTERM, signal.SIGINT)}
    try:
        for job, interval in jobs:
            scheduler.add_job(
                _logged(job, running),
                "interval",
                seconds=interval,
                max_instances=1,
                coalesce=True,
                next_run_time=datetime.now(UTC),
                name=getattr(job, "__name__", "job"),
            )
        try:
            scheduler.start()
        except JobLookupError:
            # A job that ends while SIGTERM shuts the scheduler down can leave its loop
            # looking up the removed job: the stop was asked for, so it is a clean stop.
            if not STOPPING.is_set():
                raise
        # Here, with the handlers still ours: a second signal meanwhile exits at once.
        running.wait_idle()
        logger.info("faithmon: worker stopped")
    finally:
        for signum, handler in before.items():  # as the caller had them (a test, say)
            signal.signal(signum, handler)


class _Running:
    """How many jobs are running: the schedule's end waits for them to finish."""

    def __init__(self) -> None:
        self._count = 0
        self._changed = threading.Condition()

    def add(self, step: int) -> None:
        with self._changed:
            self._count += step
            self._changed.notify_all()

    def wait_idle(self) -> None:
        with self._changed:
            while self._count:
                self._changed.wait(0.5)


def _logged(job: Callable[[], object], running: _Running) -> Callable[[], None]:
    def wrapped() -> None:
        running.add(1)
        try:
            job()
        except Exception:
            # A database outage or a bug in one run must not stop the schedule.
            logger.exception("faithmon: job %s failed; it runs again on schedule", job)
        finally:
            running.add(-1)

    wrapped.__name__ = getattr(job, "__name__", "job")
    return wrapped
