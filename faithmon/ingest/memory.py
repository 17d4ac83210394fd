"""Give freed memory back to the system after a burst.

CPython's allocator hands large objects (chunk text, request bodies) to glibc's
malloc, which keeps freed pages in its arenas: after an overload the receiver's
resident memory stays near its peak although the buffer is empty again. When
the buffer has drained from a high mark, ``malloc_trim`` returns those pages.
Elsewhere than glibc this does nothing.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import logging
from collections.abc import Callable

logger = logging.getLogger(__name__)


def _malloc_trim() -> Callable[[int], int] | None:
    name = ctypes.util.find_library("c")
    if name is None:
        return None
    try:
        trim: Callable[[int], int] = ctypes.CDLL(name).malloc_trim
    except (OSError, AttributeError):
        return None
    return trim


class Releaser:
    """Trims once the bytes held fall below a quarter of a peak of at least ``floor``."""

    def __init__(self, floor: int = 32 << 20) -> None:
        self._floor = floor
        self._peak = 0
        self._trim = _malloc_trim()
        self.trims = 0

    def observe(self, held: int) -> None:
        self._peak = max(self._peak, held)
        if self._peak < self._floor or held > self._peak // 4:
            return
        self._peak = held
        if self._trim is not None:
            self._trim(0)
            self.trims += 1
