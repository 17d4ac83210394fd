"""Log each kind of internal failure once, and dropped spans at most once a minute,
so a broken shim or an absent collector cannot flood the app's logs."""

from __future__ import annotations

import logging
import threading
import time

logger = logging.getLogger("faithmon_instrumentation")

_seen: set[str] = set()
_lock = threading.Lock()


def log_once(key: str, message: str, *, exc_info: bool = True) -> None:
    with _lock:
        if key in _seen:
            return
        _seen.add(key)
    logger.warning(
        "faithmon_instrumentation: %s (further occurrences are not logged)",
        message,
        exc_info=exc_info,
    )


def reset() -> None:
    """Forget what was logged (tests)."""
    with _lock:
        _seen.clear()


class DropReport:
    """Counts spans the shim could not deliver and says so in one warning line, with
    the count and the reasons, at most once per ``interval`` seconds.

    The first drop is reported at once; later ones are summed until the interval
    has passed and a drop, an export or ``report()`` comes along, and whatever is
    left is reported at shutdown (``report(force=True)``). Never raises.
    """

    def __init__(self, interval: float) -> None:
        self._interval = interval
        self._counts: dict[str, int] = {}
        self._last = float("-inf")
        self._lock = threading.Lock()
        self.total = 0
        """Spans dropped since creation, reported or not."""

    def add(self, count: int, reason: str) -> None:
        if count <= 0:
            return
        with self._lock:
            self._counts[reason] = self._counts.get(reason, 0) + count
            self.total += count
        self.report()

    def report(self, *, force: bool = False) -> None:
        try:
            with self._lock:
                now = time.monotonic()
                if not self._counts or (not force and now - self._last < self._interval):
                    return
                counts, self._counts, self._last = self._counts, {}, now
            total = sum(counts.values())
            if len(counts) == 1:
                detail = next(iter(counts))
            else:
                detail = "; ".join(f"{n} as {reason}" for reason, n in counts.items())
            logger.warning(
                "faithmon_instrumentation: dropped %d span%s: %s",
                total,
                "" if total == 1 else "s",
                detail,
            )
        except Exception:  # telemetry never breaks the host
            pass
