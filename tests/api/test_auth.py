"""The key ring, the route scopes, the session cookie: with an injected clock."""

from __future__ import annotations

import stat
from dataclasses import replace
from pathlib import Path

import pytest

from faithmon.api.auth import (
    AuthConfig,
    KeyRing,
    ingest_authorizer,
    is_open,
    needed_scope,
)
from faithmon.api.keys import key_hash, new_key
from faithmon.api.sessions import SessionSigner
from faithmon.model import ApiKey
from tests.timing import days_ago

# The dialect is not the point here: PostgreSQL runs in the second_backend tier.
pytestmark = pytest.mark.one_backend


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _key(key_id: int, scopes: tuple[str, ...], tenant: str | None = None) -> tuple[str, ApiKey]:
    key, prefix = new_key()
    return key, ApiKey(key_id, prefix, key_hash(key), scopes, tenant)


def test_a_revoked_key_stops_working_after_one_refresh() -> None:
    clock = Clock()
    key, stored = _key(1, ("ingest",), "acme")
    keys = [stored]
    ring = KeyRing(lambda: keys, refresh_seconds=5.0, clock=clock)
    ring.refresh()
    grant = ring.check(key)
    assert grant is not None and grant.tenant == "acme" and grant.allows("ingest")
    keys[0] = replace(stored, revoked_at=days_ago(0))
    clock.now += 4.9
    ring.refresh()  # still fresh: not read again
    assert ring.check(key) is not None
    clock.now += 0.2
    ring.refresh()
    assert ring.check(key) is None and ring.by_id(1) is None
    assert not ring.empty()  # a revoked key still counts: auto stays closed


def test_the_last_keys_stay_in_force_while_the_store_fails() -> None:
    clock = Clock()
    key, stored = _key(1, ("read",))
    failing = False

    def load() -> list[ApiKey]:
        if failing:
            raise ConnectionError("database down")
        return [stored]

    ring = KeyRing(load, clock=clock)
    ring.refresh()
    failing = True
    clock.now += 60
    ring.refresh()
    assert ring.check(key) is not None


def test_a_store_that_never_answered_is_an_error() -> None:
    def load() -> list[ApiKey]:
        raise ConnectionError("database down")

    ring = KeyRing(load)
    with pytest.raises(ConnectionError):
        ring.refresh()
    verdict = ingest_authorizer(ring, AuthConfig())(None)
    assert verdict[0] == 503


def test_a_restart_while_the_store_is_down_uses_the_keys_last_read(tmp_path: Path) -> None:
    """The keys read are kept beside the spool (hashes only, 0600); a ring that never read
    the store uses them, a revoked one stays revoked, and no key is written in clear."""
    key, stored = _key(1, ("ingest",), "acme")
    revoked, gone = _key(2, ("ingest",))
    cache = tmp_path / "keys.json"
    KeyRing(lambda: [stored, replace(gone, revoked_at=days_ago(1))], cache=cache).refresh()
    assert stat.S_IMODE(cache.stat().st_mode) == 0o600
    assert key not in cache.read_text() and revoked not in cache.read_text()

    def down() -> list[ApiKey]:
        raise ConnectionError("database down")

    ring = KeyRing(down, cache=cache)
    ring.refresh()
    grant = ring.check(key)
    assert grant is not None and grant.tenant == "acme"
    assert ring.check(revoked) is None and not ring.empty()
    cache.write_text("{not json")
    with pytest.raises(ConnectionError):
        KeyRing(down, cache=cache).refresh()


def test_auto_is_open_only_on_loopback_with_no_key() -> None:
    _, stored = _key(1, ("admin",))
    empty = KeyRing(list)
    empty.refresh()
    some = KeyRing(lambda: [stored])
    some.refresh()
    assert is_open(AuthConfig("auto", loopback=True), empty)
    assert not is_open(AuthConfig("auto", loopback=False), empty)
    assert not is_open(AuthConfig("auto", loopback=True), some)
    assert not is_open(AuthConfig("required", loopback=True), empty)
    assert is_open(AuthConfig("off", loopback=False), some)


@pytest.mark.parametrize(
    ("method", "path", "scope"),
    [
        ("GET", "/healthz", None),
        ("POST", "/v1/traces", "ingest"),
        ("POST", "/v1/logs", "ingest"),
        ("GET", "/metrics", "read"),
        ("GET", "/openapi.json", "read"),
        ("GET", "/api/v1/traces", "read"),
        ("POST", "/api/v1/alerts/3/ack", "review"),
        ("GET", "/", "read"),
        ("GET", "/login", None),
    ],
)
def test_each_route_needs_its_scope(method: str, path: str, scope: str | None) -> None:
    assert needed_scope(method, path, AuthConfig()) == scope


def test_metrics_can_be_public() -> None:
    assert needed_scope("GET", "/metrics", AuthConfig(metrics_public=True)) is None


def test_ingest_authorizer_answers_like_the_http_guard() -> None:
    ingest_key, ingest = _key(1, ("ingest",), "acme")
    read_key, reader = _key(2, ("read",))
    ring = KeyRing(lambda: [ingest, reader])
    authorize = ingest_authorizer(ring, AuthConfig())
    assert authorize(f"Bearer {ingest_key}") == (200, "acme", "")
    assert authorize(f"Bearer {read_key}")[0] == 403
    assert authorize("Bearer fm_00000000_nope")[0] == 401
    assert authorize(None)[0] == 401


def test_a_session_cookie_names_its_key_until_it_expires() -> None:
    clock = Clock()
    signer = SessionSigner(b"a scrub key of sixteen+", clock=clock)
    cookie = signer.issue(7, lifetime=60)
    opened = signer.verify(cookie)
    assert opened is not None and opened.key_id == 7 and opened.opened_at == clock.now
    _, at, expires, mac = cookie.split(".")
    assert signer.verify(f"8.{at}.{expires}.{mac}") is None
    assert signer.verify(f"7.{int(at) + 100}.{expires}.{mac}") is None
    assert SessionSigner(b"another key, 16 bytes", clock=clock).verify(cookie) is None
    assert signer.verify("garbage") is None and signer.verify("") is None
    clock.now += 61
    assert signer.verify(cookie) is None
