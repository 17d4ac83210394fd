"""Shared fixtures: a clean environment, and a database per test on SQLite and PostgreSQL.

PostgreSQL tests use the server at FAITHMON_TEST_POSTGRES_URL (default
postgresql+psycopg://postgres@127.0.0.1:5432/test); each test gets a database of
its own, dropped afterwards. Without a server they skip, unless
FAITHMON_REQUIRE_POSTGRES=1 (as CI sets it), which turns the skip into a failure.

Browser tests drive Debian's Chromium (``apt-get install chromium``) with Playwright;
without either they skip, unless FAITHMON_REQUIRE_BROWSER=1 (as CI sets it).
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import uuid
from collections.abc import Iterator

import pytest
from sqlalchemy import Engine, make_url, text
from sqlalchemy.orm import Session, sessionmaker

from faithmon.store import engine as store_engine

PG_URL = os.environ.get(
    "FAITHMON_TEST_POSTGRES_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test"
)
REQUIRE_PG = os.environ.get("FAITHMON_REQUIRE_POSTGRES") == "1"
REQUIRE_BROWSER = os.environ.get("FAITHMON_REQUIRE_BROWSER") == "1"
_KEEP = (
    "FAITHMON_TEST_POSTGRES_URL",
    "FAITHMON_REQUIRE_POSTGRES",
    "FAITHMON_REQUIRE_BROWSER",
    "FAITHMON_SCREENSHOTS",  # where the dashboard test saves README's screenshot
)


@pytest.fixture(autouse=True)
def clean_environ(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests never see the developer's FAITHMON_* or OTEL_* settings."""
    for name in list(os.environ):
        if name.startswith(("FAITHMON_", "OTEL_")) and name not in _KEEP:
            monkeypatch.delenv(name)


def _admin_engine() -> Engine:
    return store_engine.make_engine(PG_URL, isolation_level="AUTOCOMMIT")


def _postgres_available() -> str | None:
    try:
        engine = _admin_engine()
        with engine.connect() as connection:
            connection.execute(text("SELECT 1"))
        engine.dispose()
        return None
    except Exception as exc:
        return f"PostgreSQL not reachable at {make_url(PG_URL).render_as_string()}: {exc}"


@pytest.fixture(scope="session")
def postgres_server() -> str:
    reason = _postgres_available()
    if reason is not None:
        if REQUIRE_PG:
            pytest.fail(f"FAITHMON_REQUIRE_POSTGRES=1 but {reason}")
        pytest.skip(reason)
    return PG_URL


@pytest.fixture(scope="session")
def chromium() -> str:
    """The path of the system Chromium for Playwright (never a downloaded browser)."""
    reason = None
    path = shutil.which("chromium") or shutil.which("chromium-browser")
    if importlib.util.find_spec("playwright") is None:
        reason = "Playwright is not installed (pip install -e '.[dev]')"
    elif path is None:
        reason = "no chromium on PATH (apt-get install chromium)"
    if reason is not None:
        if REQUIRE_BROWSER:
            pytest.fail(f"FAITHMON_REQUIRE_BROWSER=1 but {reason}")
        pytest.skip(reason)
    assert path is not None
    return path


@pytest.fixture
def postgres_url(postgres_server: str) -> Iterator[str]:
    """A fresh, empty PostgreSQL database for one test."""
    name = f"faithmon_test_{uuid.uuid4().hex[:12]}"
    admin = _admin_engine()
    with admin.connect() as connection:
        connection.execute(text(f'CREATE DATABASE "{name}"'))
    try:
        yield make_url(postgres_server).set(database=name).render_as_string(hide_password=False)
    finally:
        with admin.connect() as connection:
            connection.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def database_url(request: pytest.FixtureRequest, tmp_path: os.PathLike[str]) -> str:
    """An empty database URL, once on SQLite and once on PostgreSQL."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path}/faithmon.db"
    url: str = request.getfixturevalue("postgres_url")
    return url


@pytest.fixture
def engine(database_url: str) -> Iterator[Engine]:
    """An engine on an upgraded schema."""
    engine = store_engine.make_engine(database_url)
    store_engine.upgrade(engine)
    yield engine
    engine.dispose()


@pytest.fixture
def sessions(engine: Engine) -> sessionmaker[Session]:
    return store_engine.session_factory(engine)
