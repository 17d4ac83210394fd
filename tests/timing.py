"""Time in tests: dates relative to the day the suite runs, and waiting on a condition.

A hard-coded date ages: once it is older than the retention window (or a drift
window, or the no-data limit) a worker running on the real clock treats the test's
records differently, and the test goes red by the calendar. A fixed sleep either
waits too long or not long enough; poll a condition with a deadline instead.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta


def days_ago(days: int, hour: int = 0) -> datetime:
    """``hour`` o'clock UTC, ``days`` days before today.

    Aligned to the hour like a hand-written date, so hourly and daily buckets fall
    the same way on every run, and in the past, so no record is in the future.
    """
    today = datetime.now(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    return today - timedelta(days=days) + timedelta(hours=hour)


def wait_for(
    condition: Callable[[], object], timeout: float, what: str, interval: float = 0.2
) -> None:
    """Poll ``condition`` every ``interval`` seconds until it is true; fail after ``timeout``."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what}")
        time.sleep(interval)
