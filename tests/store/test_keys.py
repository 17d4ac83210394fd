"""API keys in the store, and the migration that gives records a tenant column."""

from __future__ import annotations

import json

import sqlalchemy as sa
from sqlalchemy.orm import Session, sessionmaker

from faithmon.api.keys import key_hash, new_key
from faithmon.store import engine as store_engine
from faithmon.store import keys
from tests.timing import days_ago


def test_keys_are_created_listed_found_and_revoked(sessions: sessionmaker[Session]) -> None:
    key, prefix = new_key()
    with sessions.begin() as session:
        made = keys.create_key(session, prefix, key_hash(key), ["read", "ingest"], "acme", "bot")
    with sessions() as session:
        [listed] = keys.list_keys(session)
        assert listed.scopes == ("ingest", "read") and listed.tenant == "acme"
        found = keys.find_key(session, key_hash(key))
        assert (
            found is not None and found.id == made.id and keys.find_key(session, "0" * 64) is None
        )
    with sessions.begin() as session:
        assert keys.revoke_key(session, made.id)
        assert not keys.revoke_key(session, made.id)
    with sessions() as session:
        assert keys.list_keys(session, active_only=True) == []
        [revoked] = keys.list_keys(session)
        assert revoked.revoked_at is not None


def test_the_migration_copies_each_record_tenant(empty_database_url: str) -> None:
    engine = store_engine.make_engine(empty_database_url)
    try:
        store_engine.upgrade(engine, "0011")
        now = days_ago(1).replace(tzinfo=None)
        with engine.begin() as connection:
            for trace, labels in (("a" * 32, {"tenant": "acme"}), ("b" * 32, {"route": "x"})):
                connection.execute(
                    sa.text(
                        "INSERT INTO records (trace_id, started_at, ingested_at, question, "
                        "answer, chunks, labels, status, sample_reason) VALUES "
                        "(:t, :now, :now, 'q', 'a', :chunks, :labels, 'scored', 'ratio')"
                    ),
                    {"t": trace, "now": now, "chunks": "[]", "labels": json.dumps(labels)},
                )
        store_engine.upgrade(engine)
        with engine.connect() as connection:
            rows = connection.execute(sa.text("SELECT trace_id, tenant FROM records ORDER BY 1"))
            assert [tuple(r) for r in rows] == [("a" * 32, "acme"), ("b" * 32, None)]
    finally:
        engine.dispose()
