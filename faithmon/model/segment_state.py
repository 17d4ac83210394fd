"""How a drift detector's state is named, and a segment's from its detectors: the one rule
``faithmon drift status``, the read API and the dashboard's overview all say.

A detector is *folded* when its segment is too thin for a detector of its own (its
records count in its partition's overall), *explained* when its drift is explained by a
more concentrated drifting segment (that one raises the alert), else its level: ``ok``,
``pending`` or ``firing``. A segment shows the most alarming state of its detectors.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

Level = Literal["ok", "pending", "firing"]
DetectorState = Literal["ok", "folded", "explained", "pending", "firing"]

RANK: dict[str, int] = {"ok": 0, "folded": 1, "explained": 2, "pending": 3, "firing": 4}
"""Least to most alarming. An explained detector drifts (another segment carries its
alert); a folded one has no detector of its own to say it does not: both are more to
know than ``ok``, less than an alert of the segment's own."""


def detector_state(level: Level, folded: bool, explained: bool) -> DetectorState:
    """A detector's state from its level and whether it is folded or explained; folded
    first, as a folded detector is never read on its own."""
    if folded:
        return "folded"
    return "explained" if explained else level


def segment_state(states: Iterable[str]) -> str:
    """The most alarming of a segment's detectors' states (``ok`` when it has none)."""
    return max(states, key=lambda state: RANK.get(state, 0), default="ok")
