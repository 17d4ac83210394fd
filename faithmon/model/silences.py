"""Silences: label matchers (as text) over a time range; while one is active, notifications
of the alerts it matches stop (the alerts themselves still change state and are stored).

A silence is ``pending`` before it starts, ``active`` from its start to its end, and
``expired`` after its end or once someone expires it early.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Literal

SilenceState = Literal["pending", "active", "expired"]

MUTED_AT = "muted_at"
"""On an alert's details: when a silence stopped its notification (ISO time)."""
MUTED_BY = "muted_by_silence"
"""On an alert's details: the id of the silence that stopped it."""

_DURATION = re.compile(r"(?:\d{1,9}[smhd])+")
_PART = re.compile(r"(\d{1,9})([smhd])")
_UNIT = {"s": 1, "m": 60, "h": 3600, "d": 86400}


@dataclass(frozen=True, slots=True)
class Silence:
    matchers: tuple[str, ...]
    """Label matchers as written (``model=gpt-4o``, ``route!=health``, ``tenant=~a|b``)."""
    starts_at: datetime
    ends_at: datetime
    comment: str
    created_by: str
    created_at: datetime
    id: int | None = None
    expired_at: datetime | None = None
    """When someone ended it early; None while it runs its course."""
    tenant: str | None = None
    """The tenant of the key that made it; None: an operator's."""

    def state(self, now: datetime) -> SilenceState:
        if self.expired_at is not None or self.ends_at <= now:
            return "expired"
        return "pending" if self.starts_at > now else "active"


def parse_duration(text: str, longest: timedelta | None = timedelta(days=366)) -> timedelta:
    """``30s``, ``10m``, ``2h``, ``1d``, or a sum (``1h30m``); ValueError saying why not.
    Silences and the alert rules file both write durations so."""
    if not isinstance(text, str) or not _DURATION.fullmatch(text.strip()):
        raise ValueError(f"{text!r}: not a duration (write 30s, 10m, 2h or 1d)")
    seconds = sum(int(n) * _UNIT[unit] for n, unit in _PART.findall(text))
    if seconds <= 0:
        raise ValueError(f"{text!r}: a duration must be longer than zero")
    if longest is not None and seconds > longest.total_seconds():
        raise ValueError(f"{text!r}: longer than a year")
    return timedelta(seconds=seconds)
