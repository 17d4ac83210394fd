"""The judge's verdict cache: what a (question, chunks, answer) already judged by the same
configuration came to, kept in memory up to a number of entries (least recently used go)."""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Generic, TypeVar

V = TypeVar("V")


class VerdictCache(Generic[V]):
    def __init__(self, entries: int) -> None:
        self._entries = entries
        self._items: OrderedDict[str, V] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: str) -> V | None:
        with self._lock:
            found = self._items.get(key)
            if found is not None:
                self._items.move_to_end(key)
            return found

    def put(self, key: str, judged: V) -> None:
        with self._lock:
            self._items[key] = judged
            while len(self._items) > self._entries:
                self._items.popitem(last=False)
