"""The health of faithmon's own parts, which alerts of their own report (``ingest_error``,
``judge_error``): never counted as low faithfulness."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime


@dataclass(frozen=True, slots=True)
class ReceiverStatus:
    """What a running receiver last said of itself (its heartbeat)."""

    name: str
    """``host:port``: a receiver restarted in the same place takes its row over."""
    started_at: datetime
    beat_at: datetime
    stopped_at: datetime | None = None
    """Set when it stopped cleanly (a drained shutdown): its silence is then no failure."""
    spans: int = 0
    records: int = 0
    lost: int = 0
    backlog: int = 0
    """Records waiting for the store because saving them failed."""
    failing_since: datetime | None = None
    """Since when saving has failed without a success (None: the last save succeeded)."""
    last_error: str = ""
    """The kind of the last failure (an exception's class name, never its text)."""


@dataclass(frozen=True, slots=True)
class KeyFingerprint:
    """A keyed fingerprint of a secret (never the secret), as the store keeps it: the first
    process to run against the store records its own, and every later one compares."""

    fingerprint: str
    recorded_by: str
    """The process that recorded it: command, host, pid and where its key came from."""
    recorded_at: datetime
