"""Warnings that repeat every tick of an outage, said once per interval.

During a database outage the pipeline fails to save on every tick (four a second), and
each failure is a warning: six lines a second drown the log that on-call reads. A
``Throttle`` says the first one at once, then at most one line per ``interval`` seconds
for each kind, with how many it held back since.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable


class Throttle:
    def __init__(
        self,
        logger: logging.Logger,
        interval: float = 30.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._logger, self._interval, self._clock = logger, interval, clock
        self._said: dict[str, float] = {}
        self._held: dict[str, int] = {}

    def warning(self, kind: str, message: str, error: BaseException) -> None:
        """Log ``message`` (its ``%s`` the error's type: never its text, which may quote
        a record) unless one of ``kind`` was logged within the interval."""
        now = self._clock()
        said = self._said.get(kind)
        if said is not None and now - said < self._interval:
            self._held[kind] = self._held.get(kind, 0) + 1
            return
        held = self._held.pop(kind, 0)
        since = f" ({held} more like it in {now - said:.0f} s)" if held and said is not None else ""
        self._logger.warning("%s%s", message % type(error).__name__, since)
        self._said[kind] = now
