"""Log each kind of internal failure once, so a broken shim cannot flood the app's logs."""

from __future__ import annotations

import logging
import threading

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
