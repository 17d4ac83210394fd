"""The read API served over real HTTP from the seeded store (``seed.py``), once per backend
for a test module."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from faithmon.api.app import create_app
from faithmon.api.v1 import ReadOptions
from faithmon.cli import wiring
from faithmon.config import Settings
from faithmon.ingest.pipeline import Pipeline
from faithmon.ingest.sampler import KeepAll
from faithmon.ingest.scrub import identity
from faithmon.store import engine as store_engine
from tests.api.seed import CONFIG, JUDGE, Seeded, seed
from tests.servers import serve_in_thread


def _served(url: str) -> Iterator[Seeded]:
    engine = store_engine.make_engine(url)
    try:
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


@pytest.fixture(scope="module")
def api(module_database_url: str) -> Iterator[Seeded]:
    """The seeded read API, shared by a module's tests (they only read, or ack, which each
    test checks on an alert of its own), once per backend."""
    yield from _served(module_database_url)
