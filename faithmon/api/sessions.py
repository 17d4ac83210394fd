"""The dashboard's session cookie: the id of the key that logged in and an expiry, signed
with HMAC-SHA256. The key itself never goes into the cookie; each request looks the
id up among the active keys, so revoking a key ends its sessions too."""

from __future__ import annotations

import hashlib
import hmac
import time
from collections.abc import Callable

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
        body = f"{key_id}.{int(self._clock() + lifetime)}"
        return f"{body}.{self._mac(body)}"

    def verify(self, value: str) -> int | None:
        """The key id a cookie names, or None when it is forged, malformed or expired."""
        key_id, _, rest = value.partition(".")
        expires, _, mac = rest.partition(".")
        if not (key_id.isdigit() and expires.isdigit() and mac):
            return None
        if not hmac.compare_digest(self._mac(f"{key_id}.{expires}"), mac):
            return None
        if int(expires) < self._clock():
            return None
        return int(key_id)
