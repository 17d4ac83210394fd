"""Per-segment state bounded by a cap, not by the label values clients send.

Sampling keeps state per segment: the sampler's rate buckets and hourly counts, and the
counts waiting for the store (through an outage, for as long as it lasts). A segment is
label values an app sends, and one label that holds an id (a route with an order number
in it) makes a new segment per request: a map keyed by them would grow for as long as
the process lives. Each such map is an ``Lru`` of at most ``MAX_SEGMENTS`` entries, the
least recently used first; what does not fit is counted under ``OTHER_SEGMENT`` (how
depends on the map), and the first time a map reaches its cap it says so in the log.
"""

from __future__ import annotations

import logging
from collections import OrderedDict
from collections.abc import Callable, Hashable, ItemsView
from typing import Generic, TypeVar

from ..model import OTHER_SEGMENT, segment_key

logger = logging.getLogger(__name__)

MAX_SEGMENTS = 2_000
"""Entries in each per-segment map of one process (segments, or segment and hour pairs).

Well past the segments a dashboard can show, and small enough that a full map costs a
few megabytes at most."""

OTHER_KEY = segment_key(OTHER_SEGMENT)

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class Lru(Generic[K, V]):
    """A map of at most ``cap`` entries, kept in order of use. Not thread-safe."""

    def __init__(self, what: str, cap: int = MAX_SEGMENTS) -> None:
        if cap < 1:
            raise ValueError("cap must be at least 1")
        self._what = what
        self._cap = cap
        self._entries: OrderedDict[K, V] = OrderedDict()
        self._said = False

    def __len__(self) -> int:
        return len(self._entries)

    def items(self) -> ItemsView[K, V]:
        return self._entries.items()

    def clear(self) -> None:
        self._entries.clear()

    def get(self, key: K) -> V | None:
        """``key``'s entry, now the most recently used, or None."""
        value = self._entries.get(key)
        if value is not None:
            self._entries.move_to_end(key)
        return value

    def put(self, key: K, value: V) -> tuple[K, V] | None:
        """Set ``key``'s entry; past the cap the least recently used gives way and is
        returned, for the caller to count under ``OTHER_SEGMENT``."""
        self._entries[key] = value
        self._entries.move_to_end(key)
        if len(self._entries) <= self._cap:
            return None
        self._say()
        return self._entries.popitem(last=False)

    def room_for(self, key: K, other: K, spent: Callable[[K, V], bool]) -> K:
        """The key to keep ``key``'s state under: its own while there is room, or room
        is made by dropping the least recently used entry when ``spent`` says it holds
        nothing a fresh one would not (a full bucket, a past hour); else ``other``, so a
        flood of new segments shares one entry rather than undoing the limits."""
        if key in self._entries or len(self._entries) < self._cap:
            return key
        self._say()
        oldest_key, oldest = next(iter(self._entries.items()))
        if spent(oldest_key, oldest):
            del self._entries[oldest_key]
            return key
        return other

    def _say(self) -> None:
        if not self._said:
            self._said = True
            logger.warning(
                "faithmon: %s reached %d segments; more are counted under %s (a label "
                "with ids in its values makes a new segment per request)",
                self._what,
                self._cap,
                OTHER_KEY,
            )
