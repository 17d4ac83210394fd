"""API keys: how they are made, stored and checked (no storage here: the store keeps the
hash, the prefix and the grant).

A key is ``fm_<prefix>_<secret>``: the prefix (8 hex digits, 32 bits) names the key in
lists and logs; the secret is 192 random bits. Only the SHA-256 of the whole key is
stored. A slow password hash is not needed: the key is random, not chosen by a
person, so there is nothing to guess from its hash, and checking stays cheap enough
for every OTLP export.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Iterable
from dataclasses import dataclass

SCOPES = ("ingest", "read", "review", "admin")
"""``admin`` includes every other scope."""

_PREFIX = "fm_"
MIN_SECRET_CHARACTERS = 22
"""128 bits in URL-safe base64: the shortest secret a key given to faithmon may have."""


@dataclass(frozen=True, slots=True)
class Grant:
    """What a valid key may do."""

    key_id: int
    prefix: str
    scopes: frozenset[str]
    tenant: str | None = None

    def allows(self, scope: str) -> bool:
        return "admin" in self.scopes or scope in self.scopes


def new_key() -> tuple[str, str]:
    """A fresh key and its prefix; the key is shown once, then only its hash is kept."""
    prefix = secrets.token_hex(4)
    return f"{_PREFIX}{prefix}_{secrets.token_urlsafe(24)}", prefix


def key_hash(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()


def prefix_of(key: str) -> str | None:
    """The prefix a key claims, or None for text that is not shaped like a key."""
    if not key.startswith(_PREFIX):
        return None
    prefix, sep, secret = key[len(_PREFIX) :].partition("_")
    if not sep or len(prefix) != 8 or not secret:
        return None
    return prefix


def matches(key: str, stored_hash: str) -> bool:
    """Constant-time comparison of a presented key with a stored hash."""
    return hmac.compare_digest(key_hash(key), stored_hash)


def parse_scopes(text: str | Iterable[str]) -> frozenset[str]:
    """``ingest,read`` as a set of scopes; an unknown scope is a ValueError naming it."""
    items = text.split(",") if isinstance(text, str) else list(text)
    scopes = frozenset(item.strip().lower() for item in items if item.strip())
    unknown = sorted(scopes - set(SCOPES))
    if unknown:
        raise ValueError(f"unknown scope {', '.join(unknown)}; scopes are {', '.join(SCOPES)}")
    if not scopes:
        raise ValueError(f"give at least one scope of {', '.join(SCOPES)}")
    return scopes


def bearer(header: str) -> str | None:
    """The key in an ``Authorization: Bearer KEY`` header value, or None."""
    scheme, _, value = header.strip().partition(" ")
    if scheme.lower() != "bearer" or not value.strip():
        return None
    return value.strip()
