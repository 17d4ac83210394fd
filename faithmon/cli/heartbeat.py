"""The receiver's heartbeat: every few seconds ``faithmon serve`` writes what it received,
saved and lost, and whether saving fails, to the store's ``receivers`` row named after
where it listens; a clean (drained) stop says so. The worker reads these rows to raise
``ingest_error`` (:mod:`faithmon.jobs.health`).

A heartbeat that cannot be written (the database is down) is logged and tried at the next
beat: the receiver itself goes on (its spool keeps what arrives).
"""

from __future__ import annotations

import logging
import threading
import time
from datetime import UTC, datetime

from ..ingest.pipeline import Pipeline
from ..model.health import ReceiverStatus
from ..store import Sessions
from ..store import receivers as store_receivers

logger = logging.getLogger(__name__)


class Heartbeat:
    def __init__(self, sessions: Sessions, pipeline: Pipeline, name: str, every: float) -> None:
        self._sessions, self._pipeline, self.name, self._every = sessions, pipeline, name, every
        self._started = datetime.now(UTC)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._failed = False
        self._failing_since: datetime | None = None

    def status(self, stopped: bool = False) -> ReceiverStatus:
        now = datetime.now(UTC)
        stats = self._pipeline.stats
        # Read at each beat: saving fails while records wait in the pipeline's backlog.
        failing = self._pipeline.store_failing
        self._failing_since = (self._failing_since or now) if failing else None
        return ReceiverStatus(
            name=self.name,
            started_at=self._started,
            beat_at=now,
            stopped_at=now if stopped else None,
            spans=stats["spans"],
            records=stats["records"],
            lost=stats["lost"],
            backlog=stats["backlog"],
            failing_since=self._failing_since,
            last_error=self._pipeline.last_error,
        )

    def beat(self, stopped: bool = False) -> None:
        try:
            with self._sessions() as session, session.begin():
                store_receivers.beat(session, self.status(stopped))
        except Exception as exc:
            if not self._failed:
                logger.warning(
                    "faithmon: receiver heartbeat not written (%s); trying again",
                    type(exc).__name__,
                )
            self._failed = True
            return
        self._failed = False

    def start(self) -> None:
        self.beat()

        def run() -> None:
            while not self._stop.wait(self._every):
                self.beat()

        self._thread = threading.Thread(target=run, name="faithmon-heartbeat", daemon=True)
        self._thread.start()

    def stop(self, seconds: float = 5.0) -> None:
        """Stop beating and say the receiver stopped cleanly, if the store answers within
        ``seconds`` (a hung database must not keep a stopping receiver alive)."""
        deadline = time.monotonic() + seconds  # both waits together, not each
        self._stop.set()
        if self._thread is not None:
            self._thread.join(seconds)
        last = threading.Thread(target=self.beat, kwargs={"stopped": True}, daemon=True)
        last.start()
        last.join(max(0.0, deadline - time.monotonic()))
