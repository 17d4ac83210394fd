"""Who may call what: every request's key checked against the store's keys, its scope
against the route's, its tenant handed on (ingest stamps it, reads filter by it).

``FAITHMON_AUTH``: ``required`` always asks for a key; ``off`` never does;
``auto`` (the default) is open only while the server binds a loopback address
and no key exists, so a laptop demo needs no key and the first key created
closes the door (within ``refresh_seconds``, as a revocation does).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from ..model import ApiKey
from . import key_cache
from .keys import Grant, bearer, matches, prefix_of

logger = logging.getLogger(__name__)

AuthMode = Literal["auto", "required", "off"]
AUTH_MODES: tuple[AuthMode, ...] = ("auto", "required", "off")

OPEN = Grant(0, "open", frozenset({"admin"}))
"""The grant of every request while auth is off or open (``auto`` with no key)."""


@dataclass(frozen=True, slots=True)
class AuthConfig:
    mode: AuthMode = "auto"
    loopback: bool = True
    """The server binds a loopback address only."""
    metrics_public: bool = False
    refresh_seconds: float = 5.0
    allowed_hosts: frozenset[str] | None = None
    """Host names (no port) requests may name; None: any."""


class KeyRing:
    """The active keys, read from the store at most every ``refresh_seconds``.

    While the store cannot be read the last keys read stay in force (the receiver
    keeps acknowledging into its spool then, and must still tell keys apart).
    """

    def __init__(
        self,
        load: Callable[[], Sequence[ApiKey]],
        refresh_seconds: float = 5.0,
        clock: Callable[[], float] = time.monotonic,
        cache: Path | None = None,
    ) -> None:
        self._load, self._refresh, self._clock = load, refresh_seconds, clock
        self._cache = cache  # the keys last read, for a start while the store is down
        self._lock = threading.Lock()
        self._by_prefix: dict[str, list[ApiKey]] = {}
        self._by_id: dict[int, ApiKey] = {}
        self._loaded_at: float | None = None
        self._failing = False
        self._any = False
        self._lock_soon = threading.Lock()
        self._refreshing = False

    def fresh(self) -> bool:
        loaded = self._loaded_at
        return loaded is not None and self._clock() - loaded < self._refresh

    def loaded(self) -> bool:
        """Keys were read at least once (or the first read failed and was retried)."""
        return self._loaded_at is not None

    def refresh_soon(self) -> None:
        """Read the keys again in a background thread, unless one is already reading: a
        store that hangs holds that thread, never a request."""
        with self._lock_soon:
            if self._refreshing:
                return
            self._refreshing = True
        threading.Thread(target=self._refresh_quietly, name="faithmon-keys", daemon=True).start()

    def _refresh_quietly(self) -> None:
        try:
            self.refresh()
        except Exception:  # logged by refresh; the keys read stay in force
            pass
        finally:
            with self._lock_soon:
                self._refreshing = False

    def refresh(self) -> None:
        """Read the keys again if the copy is stale (blocking: call it off the event loop)."""
        with self._lock:
            if self.fresh():
                return
            try:
                keys = list(self._load())
            except Exception as exc:
                if not self._failing:
                    logger.warning(
                        "faithmon: cannot read API keys (%s); the last keys read stay in force",
                        type(exc).__name__,
                    )
                self._failing = True
                if self._loaded_at is None:
                    cached = key_cache.read(self._cache) if self._cache is not None else None
                    if cached is None:
                        raise
                    self._use(cached)
                    return
                self._loaded_at = self._clock()
                return
            self._failing = False
            if self._cache is not None:
                key_cache.write(self._cache, keys)
            self._use(keys)

    def _use(self, keys: list[ApiKey]) -> None:
        # Revoked keys are read too: while any key was ever made, ``auto`` stays closed.
        active = [k for k in keys if k.revoked_at is None]
        by_prefix: dict[str, list[ApiKey]] = {}
        for key in active:
            by_prefix.setdefault(key.prefix, []).append(key)
        self._by_prefix, self._by_id = by_prefix, {k.id: k for k in active}
        self._any = bool(keys)
        self._loaded_at = self._clock()

    def empty(self) -> bool:
        """No key was ever created (revoked ones count: revoking the last key does not open
        the door)."""
        return not self._any

    def check(self, presented: str) -> Grant | None:
        """The grant of a presented key, or None for an unknown or revoked key."""
        prefix = prefix_of(presented)
        if prefix is None:
            return None
        for key in self._by_prefix.get(prefix, ()):
            if matches(presented, key.key_hash):
                return _grant(key)
        return None

    def by_id(self, key_id: int, opened_at: float | None = None) -> Grant | None:
        """The grant of a key still active, by id (a session cookie names its key so);
        None for a session ``opened_at`` (epoch seconds) before the key's last log-out."""
        key = self._by_id.get(key_id)
        if key is None:
            return None
        ended = key.sessions_ended_at
        if opened_at is not None and ended is not None and opened_at <= ended.timestamp():
            return None
        return _grant(key)

    def stale(self) -> None:
        """Read the keys again at the next use (a log-out just changed them)."""
        with self._lock:
            self._loaded_at = None if self._loaded_at is None else float("-inf")


def _grant(key: ApiKey) -> Grant:
    return Grant(key.id, key.prefix, frozenset(key.scopes), key.tenant)


def needed_scope(method: str, path: str, config: AuthConfig) -> str | None:
    """The scope a request needs; None for what stays open (health, login, assets)."""
    if path in ("/healthz", "/login", "/logout") or path.startswith("/static/"):
        return None
    if path in ("/v1/traces", "/v1/logs"):
        return "ingest"
    if path == "/metrics" and config.metrics_public:
        return None
    # Reading never changes anything; every other change (an ack, later a label) is review's.
    if method not in ("GET", "HEAD", "OPTIONS"):
        return "review"
    return "read"


def is_open(config: AuthConfig, ring: KeyRing) -> bool:
    if config.mode == "off":
        return True
    return config.mode == "auto" and config.loopback and ring.empty()


def ingest_authorizer(
    ring: KeyRing, config: AuthConfig
) -> Callable[[str | None], tuple[int, str | None, str]]:
    """The check gRPC exports pass (HTTP ones pass the guard): an ``ingest`` key, or
    none while auth is open. Blocking: gRPC calls it on its worker threads."""

    def authorize(header: str | None) -> tuple[int, str | None, str]:
        if not ring.loaded():
            try:
                ring.refresh()
            except Exception:
                return 503, None, "faithmon cannot read its API keys; retry later"
        elif not ring.fresh():
            ring.refresh_soon()  # a hung store holds that thread, not the export
        if is_open(config, ring):
            return 200, None, ""
        presented = bearer(header or "")
        grant = ring.check(presented) if presented else None
        if grant is None:
            reason = "unknown or revoked API key" if presented else "an API key is needed"
            return 401, None, f"{reason}: send authorization: Bearer KEY"
        if not grant.allows("ingest"):
            return 403, None, "this key lacks the ingest scope"
        return 200, grant.tenant, ""

    return authorize
