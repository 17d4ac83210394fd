"""Engines, sessions and schema upgrades for SQLite (embedded) and PostgreSQL."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy import Engine, create_engine, event, text
from sqlalchemy.orm import Session, sessionmaker

from . import watchdog

if TYPE_CHECKING:
    from alembic.config import Config

logger = logging.getLogger(__name__)

MIGRATIONS = Path(__file__).parent / "migrations"
# An arbitrary constant: the advisory lock that serialises concurrent upgrades.
_UPGRADE_LOCK = 7_466_110_001


# A database that accepts connections and never answers must not hold a caller forever.
CONNECT_TIMEOUT = 10.0
"""Seconds to open a connection (``FAITHMON_DB_CONNECT_TIMEOUT``)."""
STATEMENT_TIMEOUT = 300.0
"""Seconds a statement may run on PostgreSQL, 0 for none (``FAITHMON_DB_STATEMENT_TIMEOUT``);
schema upgrades run without one."""


def make_engine(
    url: str,
    connect_timeout: float = CONNECT_TIMEOUT,
    statement_timeout: float = STATEMENT_TIMEOUT,
    **kwargs: Any,
) -> Engine:
    """An engine whose every call is bounded: on PostgreSQL a connect timeout, TCP
    keepalives, a limit on unacknowledged sends (a peer that went silent mid-query
    errors instead of hanging) and a statement timeout; on SQLite a busy timeout."""
    # Statement parameters hold record content: keep them out of error messages,
    # which end up in logs.
    kwargs.setdefault("hide_parameters", True)
    if url.startswith("sqlite"):
        engine = create_engine(url, connect_args={"timeout": 30}, **kwargs)

        @event.listens_for(engine, "connect")
        def _pragmas(dbapi_connection: Any, _record: Any) -> None:
            cursor = dbapi_connection.cursor()
            cursor.execute("PRAGMA journal_mode=WAL")
            cursor.execute("PRAGMA synchronous=NORMAL")
            cursor.execute("PRAGMA foreign_keys=ON")
            cursor.close()

        return engine
    connect: dict[str, Any] = {
        "connect_timeout": max(1, round(connect_timeout)),
        "keepalives": 1,
        "keepalives_idle": 30,
        "keepalives_interval": 10,
        "keepalives_count": 3,
        "tcp_user_timeout": int(max(5.0, 3 * connect_timeout) * 1000),
    }
    if statement_timeout > 0:
        connect["options"] = f"-c statement_timeout={int(statement_timeout * 1000)}"
    engine = create_engine(url, pool_pre_ping=True, connect_args=connect, **kwargs)
    if statement_timeout > 0:
        # Past the server's own limit, the call waits on a peer that never answers.
        watchdog.guard(engine, statement_timeout + max(5.0, 3 * connect_timeout))

    @event.listens_for(engine, "connect")
    def _settings(dbapi_connection: Any, _record: Any) -> None:
        # PostgreSQL compiles a plan that it costs past jit_above_cost with LLVM first:
        # 0.1-0.3 s that faithmon's queries (documents over 100,000 records; the report
        # past about 160,000) do not win back. Committed, so the pool's reset keeps it.
        with dbapi_connection.cursor() as cursor:
            cursor.execute("SET jit = off")
        dbapi_connection.commit()

    return engine


def session_factory(engine: Engine) -> sessionmaker[Session]:
    return sessionmaker(engine, expire_on_commit=False)


def _alembic_config() -> Config:
    # Alembic is imported when a schema is read or upgraded, not by every command that
    # imports the store: it costs a few tenths of a second at each process start.
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    return config


def upgrade(engine: Engine, revision: str = "head") -> None:
    """Bring the schema to ``revision``; safe to run from several processes at once."""
    from alembic import command

    config = _alembic_config()
    # A migration over a large table may outlast the statement timeout (and the watchdog).
    with engine.connect() as connection, connection.begin():
        connection.execution_options(**{watchdog.UNBOUNDED: True})
        if connection.dialect.name == "postgresql":
            connection.execute(text("SET LOCAL statement_timeout = 0"))
            connection.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": _UPGRADE_LOCK})
        config.attributes["connection"] = connection
        command.upgrade(config, revision)


def empty(engine: Engine) -> None:
    """Delete every row of faithmon's tables, keeping the schema (the demo starting its own
    database afresh where the database is not a file it may remove)."""
    from .tables import Base

    with engine.begin() as connection:
        for table in reversed(Base.metadata.sorted_tables):
            connection.execute(table.delete())


def head_revision() -> str | None:
    """The newest migration faithmon ships."""
    from alembic.script import ScriptDirectory

    return ScriptDirectory.from_config(_alembic_config()).get_current_head()


def current_revision(engine: Engine) -> str | None:
    from alembic.runtime.migration import MigrationContext

    with engine.connect() as connection:
        return MigrationContext.configure(connection).get_current_revision()
