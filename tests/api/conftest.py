"""The read API served over real HTTP from the seeded store (``seed.py``), once per backend
for a test module."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import make_url, text

from faithmon.api.app import create_app
from faithmon.api.v1 import ReadOptions
from faithmon.cli import wiring
from faithmon.config import Settings
from faithmon.ingest.pipeline import Pipeline
from faithmon.ingest.sampler import KeepAll
from faithmon.ingest.scrub import identity
from faithmon.store import engine as store_engine
from tests.api.seed import CONFIG, JUDGE, Seeded, seed
from tests.conftest import PG_URL, REQUIRE_PG
from tests.servers import serve_in_thread


def _served(url: str, tmp: Path) -> Iterator[Seeded]:
    engine = store_engine.make_engine(url)
    try:
        store_engine.upgrade(engine)
        sessions = store_engine.session_factory(engine)
        seeded = seed(sessions)
        settings = Settings.from_env(
            {"FAITHMON_DATABASE_URL": url, "FAITHMON_SCRUB_KEY": "read-api-test-key-0123"}
        )
        auth = wiring.make_auth(settings, sessions, "127.0.0.1")
        pipeline = Pipeline(lambda batch: None, sampler=KeepAll(), scrubber=identity)
        options = ReadOptions(
            judge=JUDGE, drift=CONFIG, daily_token_budget=1000, price_input=10, price_output=30
        )
        app = create_app(pipeline, sessions=sessions, auth=auth, reads=options)
        with serve_in_thread(app) as served_url:
            seeded.url = served_url
            yield seeded
    finally:
        engine.dispose()


def _postgres_database() -> Iterator[str]:
    admin = store_engine.make_engine(PG_URL, isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as connection:
            connection.execute(text("SELECT 1"))
    except Exception as exc:
        admin.dispose()
        if REQUIRE_PG:
            pytest.fail(f"FAITHMON_REQUIRE_POSTGRES=1 but PostgreSQL is not reachable: {exc}")
        pytest.skip(f"PostgreSQL not reachable: {exc}")
    name = f"faithmon_test_{uuid.uuid4().hex[:12]}"
    with admin.connect() as connection:
        connection.execute(text(f'CREATE DATABASE "{name}"'))
    try:
        yield make_url(PG_URL).set(database=name).render_as_string(hide_password=False)
    finally:
        with admin.connect() as connection:
            connection.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


@pytest.fixture(
    scope="module", params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)]
)
def api(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Seeded]:
    """The seeded read API, shared by a module's tests (they only read, or ack, which each
    test checks on an alert of its own)."""
    tmp = tmp_path_factory.mktemp("read-api")
    if request.param == "sqlite":
        yield from _served(f"sqlite:///{tmp}/faithmon.db", tmp)
        return
    for url in _postgres_database():
        yield from _served(url, tmp)
