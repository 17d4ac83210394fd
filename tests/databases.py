"""Test databases: PostgreSQL scratch databases and schema templates, defined once.

PostgreSQL tests use the server at FAITHMON_TEST_POSTGRES_URL (default
postgresql+psycopg://postgres@127.0.0.1:5432/test). Without a server they skip,
unless FAITHMON_REQUIRE_POSTGRES=1 (as CI sets it), which turns the skip into a failure.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from sqlalchemy import Engine, make_url, text

from faithmon.store import engine as store_engine

PG_URL = os.environ.get(
    "FAITHMON_TEST_POSTGRES_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test"
)
REQUIRE_PG = os.environ.get("FAITHMON_REQUIRE_POSTGRES") == "1"


def _admin_engine() -> Engine:
    return store_engine.make_engine(PG_URL, isolation_level="AUTOCOMMIT")


def require_postgres() -> str:
    """The server's URL, or skip (fail under FAITHMON_REQUIRE_POSTGRES=1) without one."""
    try:
        engine = _admin_engine()
        with engine.connect() as connection:
            connection.execute(text("SELECT 1"))
        engine.dispose()
    except Exception as exc:
        reason = f"PostgreSQL not reachable at {make_url(PG_URL).render_as_string()}: {exc}"
        if REQUIRE_PG:
            pytest.fail(f"FAITHMON_REQUIRE_POSTGRES=1 but {reason}")
        pytest.skip(reason)
    return PG_URL


def migrate(url: str) -> None:
    """Bring the database at ``url`` to the schema's head revision."""
    engine = store_engine.make_engine(url)
    try:
        store_engine.upgrade(engine)
    finally:
        engine.dispose()


@contextmanager
def scratch_postgres(template: str | None = None) -> Iterator[str]:
    """The URL of a database of its own (a copy of ``template`` if given), dropped after."""
    name = f"faithmon_test_{uuid.uuid4().hex[:12]}"
    clause = "" if template is None else f' TEMPLATE "{template}"'
    admin = _admin_engine()
    try:
        with admin.connect() as connection:
            connection.execute(text(f'CREATE DATABASE "{name}"{clause}'))
        try:
            yield make_url(PG_URL).set(database=name).render_as_string(hide_password=False)
        finally:
            with admin.connect() as connection:
                connection.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    finally:
        admin.dispose()


def waiting_on_a_lock(engine: Engine) -> bool:
    """Some session of this PostgreSQL database waits for a lock another one holds."""
    # A new connection each time: pg_stat_activity is a snapshot per transaction.
    with engine.connect() as connection:
        waiting = connection.scalar(
            text(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
                " AND wait_event_type = 'Lock' AND pid <> pg_backend_pid()"
            )
        )
    return bool(waiting)
