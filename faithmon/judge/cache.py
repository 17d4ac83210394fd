"""The judge's verdict cache: the claims of a (question, chunks, answer) already judged by the
same configuration, kept in memory up to a number of entries (least recently used go)."""

from __future__ import annotations

import threading
from collections import OrderedDict

from ..model import Claim


class VerdictCache:
    def __init__(self, entries: int) -> None:
        self._entries = entries
        self._items: OrderedDict[str, tuple[Claim, ...]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: str) -> tuple[Claim, ...] | None:
        with self._lock:
            found = self._items.get(key)
            if found is not None:
                self._items.move_to_end(key)
            return found

    def put(self, key: str, claims: tuple[Claim, ...]) -> None:
        with self._lock:
            self._items[key] = claims
            while len(self._items) > self._entries:
                self._items.popitem(last=False)
