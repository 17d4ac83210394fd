"""API keys: random, shaped, hashed, compared in constant time; scopes parsed strictly."""

from __future__ import annotations

import pytest

from faithmon.api.keys import Grant, bearer, key_hash, matches, new_key, parse_scopes, prefix_of

# The dialect is not the point here: PostgreSQL runs in the second_backend tier.
pytestmark = pytest.mark.one_backend


def test_a_new_key_is_random_and_names_its_prefix() -> None:
    keys = {new_key() for _ in range(200)}
    assert len(keys) == 200
    key, prefix = next(iter(keys))
    assert prefix_of(key) == prefix and len(prefix) == 8
    secret = key[len(f"fm_{prefix}_") :]  # the secret may hold "_" itself
    assert len(secret) * 6 >= 128  # url-safe base64: 6 bits a character


def test_only_the_whole_key_matches_its_hash() -> None:
    key, _ = new_key()
    stored = key_hash(key)
    assert key not in stored and matches(key, stored)
    assert not matches(key[:-1], stored) and not matches(key + "x", stored)


@pytest.mark.parametrize("text", ["", "fm_", "fm_12345678", "fm_1234_x", "sk-abc", "Bearer x"])
def test_text_not_shaped_like_a_key_has_no_prefix(text: str) -> None:
    assert prefix_of(text) is None


def test_scopes_are_parsed_strictly() -> None:
    assert parse_scopes("ingest, READ") == {"ingest", "read"}
    with pytest.raises(ValueError, match="unknown scope write"):
        parse_scopes("read,write")
    with pytest.raises(ValueError, match="at least one scope"):
        parse_scopes(" , ")


def test_admin_includes_every_scope() -> None:
    admin = Grant(1, "abcd1234", frozenset({"admin"}))
    reader = Grant(2, "abcd1235", frozenset({"read"}), tenant="acme")
    assert all(admin.allows(s) for s in ("ingest", "read", "review", "admin"))
    assert reader.allows("read") and not reader.allows("ingest")


def test_bearer_header() -> None:
    assert bearer("Bearer fm_x") == "fm_x" and bearer("bearer  fm_x ") == "fm_x"
    assert bearer("Basic abc") is None and bearer("Bearer ") is None
