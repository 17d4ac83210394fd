"""Who may use faithmon: API keys as the store keeps them (the hash, never the key)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime


@dataclass(frozen=True, slots=True)
class ApiKey:
    id: int
    prefix: str
    """The short public part of the key that names it in lists and logs."""
    key_hash: str
    scopes: tuple[str, ...]
    tenant: str | None = None
    name: str = ""
    created_at: datetime | None = None
    revoked_at: datetime | None = None
    last_used_at: datetime | None = None
    sessions_ended_at: datetime | None = None
    """Dashboard sessions this key opened before then are over (a log-out)."""
