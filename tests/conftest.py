"""Shared fixtures: a clean environment, and a database per test on SQLite and PostgreSQL.

Each test gets a database of its own, dropped afterwards: a copy of one migrated once
per session, or an empty one for the tests of migrating from zero (PostgreSQL:
``tests/databases.py``).

Browser tests drive Debian's Chromium (``apt-get install chromium``) with Playwright;
without either they skip, unless FAITHMON_REQUIRE_BROWSER=1 (as CI sets it).
"""

from __future__ import annotations

import fcntl
import importlib.util
import os
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import Engine, make_url
from sqlalchemy.orm import Session, sessionmaker

from faithmon.store import engine as store_engine
from tests.databases import migrate, require_postgres, scratch_postgres
from tests.demo_run import DemoRun

REQUIRE_BROWSER = os.environ.get("FAITHMON_REQUIRE_BROWSER") == "1"

# The tests start a hundred or so `faithmon` processes (and the workers' spawned pipeline
# processes): with bytecode caches written once, each does not compile faithmon afresh
# where the environment turns them off (the editable install leaves them to first use).
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
sys.dont_write_bytecode = False
_KEEP = (
    "FAITHMON_TEST_POSTGRES_URL",
    "FAITHMON_REQUIRE_POSTGRES",
    "FAITHMON_REQUIRE_BROWSER",
    "FAITHMON_SCREENSHOTS",  # where the dashboard test saves README's screenshot
)


@pytest.hookimpl(tryfirst=True)  # before -m deselects by the marker added here
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """A one_backend test's PostgreSQL run joins the second_backend tier, which the
    default run leaves out and CI runs after it."""
    for item in items:
        if item.get_closest_marker("one_backend") and item.get_closest_marker("postgres"):
            item.add_marker(pytest.mark.second_backend)


def _clean(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.startswith(("FAITHMON_", "OTEL_")) and name not in _KEEP:
            monkeypatch.delenv(name)


@pytest.fixture(autouse=True)
def clean_environ(
    monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """Tests never see the developer's FAITHMON_* or OTEL_* settings, and each keeps what
    faithmon writes by default (a scrub key, a heartbeat) in a data dir of its own, not in
    the folder pytest runs in."""
    _clean(monkeypatch)
    monkeypatch.setenv("FAITHMON_DATA_DIR", str(tmp_path_factory.mktemp("data")))


@pytest.fixture(scope="session")
def demo_run(tmp_path_factory: pytest.TempPathFactory) -> DemoRun:
    """The whole demo, run once per session in a folder of its own with a clean
    environment; tests read it, and copy its database (``demo_copy``) to write.

    Under pytest-xdist the workers share one run: the first to get the lock runs it.
    """
    from click.testing import CliRunner

    from faithmon.cli import main

    base = tmp_path_factory.getbasetemp()
    shared = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    folder = shared / "demo"
    report, printed = folder / "report.html", folder / "stdout.txt"
    with (shared / "demo.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not printed.exists():
            folder.mkdir(exist_ok=True)
            with pytest.MonkeyPatch.context() as monkeypatch:
                _clean(monkeypatch)
                monkeypatch.chdir(folder)
                result = CliRunner().invoke(main, ["demo", "-o", str(report)])
            assert result.exit_code == 0, result.output
            printed.write_text(result.stdout, encoding="utf-8")
    database = folder / "faithmon-demo.db"  # where the demo writes unless told otherwise
    assert database.is_file() and report.is_file()
    return DemoRun(printed.read_text(encoding="utf-8"), database, report)


@pytest.fixture
def demo_copy(demo_run: DemoRun, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the session's demo database as ./faithmon-demo.db in the test's folder
    (the working directory), which FAITHMON_DATABASE_URL names."""
    monkeypatch.chdir(tmp_path)
    copy = tmp_path / "faithmon-demo.db"
    for suffix in ("", "-wal", "-shm"):  # a WAL not yet checkpointed holds the latest pages
        if Path(f"{demo_run.database}{suffix}").exists():
            shutil.copyfile(f"{demo_run.database}{suffix}", f"{copy}{suffix}")
    monkeypatch.setenv("FAITHMON_DATABASE_URL", "sqlite:///faithmon-demo.db")
    return copy


@pytest.fixture(scope="session")
def postgres_server() -> str:
    return require_postgres()


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


@pytest.fixture(scope="session")
def postgres_template(postgres_server: str) -> Iterator[str]:
    """The name of a PostgreSQL database migrated to head once per session (and per xdist
    worker); tests get copies of it (CREATE DATABASE ... TEMPLATE), never the original."""
    with scratch_postgres() as url:
        migrate(url)
        name = make_url(url).database
        assert name is not None
        yield name


@pytest.fixture(scope="session")
def sqlite_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A SQLite file migrated to head once per session; tests get copies of it."""
    path = tmp_path_factory.mktemp("template") / "faithmon.db"
    migrate(f"sqlite:///{path}")  # disposing checkpoints the WAL into the file
    return path


@pytest.fixture
def postgres_url(postgres_server: str, postgres_template: str) -> Iterator[str]:
    """A PostgreSQL database of one test's own, at the schema's head revision."""
    with scratch_postgres(postgres_template) as url:
        yield url


@pytest.fixture
def empty_postgres_url(postgres_server: str) -> Iterator[str]:
    """A PostgreSQL database of one test's own with no schema, for tests of migrating."""
    with scratch_postgres() as url:
        yield url


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A database URL at the schema's head revision, once on SQLite and once on PostgreSQL.

    Each test writes to a copy of a template migrated once per session: migrating from
    zero is what the migration tests (``empty_database_url``) are for.
    """
    if request.param == "sqlite":
        template: Path = request.getfixturevalue("sqlite_template")
        shutil.copyfile(template, tmp_path / "faithmon.db")
        return f"sqlite:///{tmp_path}/faithmon.db"
    url: str = request.getfixturevalue("postgres_url")
    return url


@pytest.fixture(
    scope="module", params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)]
)
def module_database_url(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    """A database at the schema's head revision shared by one module's tests (which only
    read it, or write what no other test there reads), once per backend."""
    if request.param == "sqlite":
        folder = tmp_path_factory.mktemp("module-db")
        shutil.copyfile(request.getfixturevalue("sqlite_template"), folder / "faithmon.db")
        yield f"sqlite:///{folder}/faithmon.db"
        return
    with scratch_postgres(request.getfixturevalue("postgres_template")) as url:
        yield url


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def empty_database_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """An empty database URL (no schema), once on SQLite and once on PostgreSQL."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path}/faithmon.db"
    url: str = request.getfixturevalue("empty_postgres_url")
    return url


@pytest.fixture
def engine(database_url: str) -> Iterator[Engine]:
    """An engine on a schema at the head revision."""
    engine = store_engine.make_engine(database_url)
    yield engine
    engine.dispose()


@pytest.fixture
def sessions(engine: Engine) -> sessionmaker[Session]:
    return store_engine.session_factory(engine)
