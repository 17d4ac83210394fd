"""The dashboard's session cookie: the id of the key that logged in, when and until when,
signed with HMAC-SHA256. The key itself never goes into the cookie; each request looks
the id up among the active keys, so revoking a key ends its sessions too, and a log-out
ends every session the key opened before it (``ApiKey.sessions_ended_at``)."""

from __future__ import annotations

import hashlib
import hmac
import time
from collections.abc import Callable
from dataclasses import dataclass

COOKIE = "faithmon_session"
LIFETIME_SECONDS = 12 * 3600


class SessionSigner:
    def __init__(self, secret: bytes, clock: Callable[[], float] = time.time) -> None:
        # A key of its own, derived so the scrub key never signs anything directly.
        self._key = hmac.new(secret, b"faithmon session cookie", hashlib.sha256).digest()
        self._clock = clock

    def _mac(self, body: str) -> str:
        return hmac.new(self._key, body.encode(), hashlib.sha256).hexdigest()

    def issue(self, key_id: int, lifetime: float = LIFETIME_SECONDS) -> str:
        now = int(self._clock())
        body = f"{key_id}.{now}.{int(now + lifetime)}"
        return f"{body}.{self._mac(body)}"

    def verify(self, value: str) -> Session | None:
        """The session a cookie names (its key's id and when it opened), or None when it
        is forged, malformed or expired."""
        parts = value.split(".")
        if len(parts) != 4 or not all(part.isdigit() for part in parts[:3]):
            return None
        key_id, opened, expires, mac = parts
        if not hmac.compare_digest(self._mac(f"{key_id}.{opened}.{expires}"), mac):
            return None
        if int(expires) < self._clock():
            return None
        return Session(int(key_id), float(opened))


@dataclass(frozen=True, slots=True)
class Session:
    key_id: int
    opened_at: float
    """Epoch seconds: a log-out of its key after this ends it."""
