"""Opening the store from a URL a person typed: every way it can fail is one DatabaseUrlError
with the cause and what to do, never a driver's traceback.

The receiver alone may start while the database does not answer (``DeferredSchema``):
it acknowledges into its spool, and checks the schema before its first write.
"""

from __future__ import annotations

import logging
import threading
import time
from pathlib import Path

from sqlalchemy import Engine, inspect
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError, DBAPIError, NoSuchModuleError, SQLAlchemyError

from ..errors import DatabaseUrlError, StoreUnavailable
from .engine import CONNECT_TIMEOUT, STATEMENT_TIMEOUT, make_engine, upgrade

logger = logging.getLogger(__name__)

_EXAMPLES = "write sqlite:///path/to/faithmon.db or postgresql+psycopg://user@host:5432/db"


def shown_url(url: str) -> str:
    """The URL with its password masked (it goes into messages and logs)."""
    try:
        return make_url(url).render_as_string(hide_password=True)
    except ArgumentError:
        return url


def sqlite_file(url: str) -> Path | None:
    """The absolute path of a SQLite URL's file; None for another backend or memory."""
    try:
        parsed = make_url(url)
    except ArgumentError:
        return None
    if parsed.get_backend_name() != "sqlite" or parsed.database in (None, "", ":memory:"):
        return None
    if parsed.database.startswith("file:"):
        return None
    return Path(parsed.database).expanduser().resolve()


def open_engine(
    url: str,
    must_exist: bool = False,
    connect_timeout: float = CONNECT_TIMEOUT,
    statement_timeout: float = STATEMENT_TIMEOUT,
    connect: bool = True,
) -> Engine:
    """An engine whose database answered a first connection (unless not ``connect``:
    the URL and its driver are checked, the database is not asked).

    ``must_exist`` is for commands that only read: they refuse a database that holds
    no faithmon schema instead of creating an empty one. The timeouts bound every call
    (``engine.make_engine``).
    """
    shown = shown_url(url)
    try:
        make_url(url)
    except ArgumentError:
        raise DatabaseUrlError(shown, "not a database URL", _EXAMPLES) from None
    file = sqlite_file(url)
    if file is not None:
        if must_exist and not file.exists():
            raise _missing(shown, f"no faithmon database at {file}")
        if not file.parent.is_dir():
            raise DatabaseUrlError(
                shown, f"the folder {file.parent} does not exist", "create it or fix the path"
            )
    try:
        engine = make_engine(url, connect_timeout, statement_timeout)
    except NoSuchModuleError:
        raise DatabaseUrlError(
            shown, f"no database backend named {make_url(url).drivername!r}", _EXAMPLES
        ) from None
    except ModuleNotFoundError as exc:
        raise DatabaseUrlError(
            shown,
            f"its driver {exc.name or 'module'} is not installed",
            "install it in faithmon's environment, or use postgresql+psycopg:// "
            "(psycopg comes with faithmon)",
        ) from None
    if not connect:
        return engine
    try:
        with engine.connect() as connection:
            schema = inspect(connection).has_table("alembic_version")
    except DBAPIError as exc:
        engine.dispose()
        raise DatabaseUrlError(shown, _first_line(exc.orig), _hint(file)) from None
    except SQLAlchemyError as exc:
        engine.dispose()
        raise DatabaseUrlError(shown, _first_line(exc), _hint(file)) from None
    if must_exist and not schema:
        engine.dispose()
        where = str(file) if file is not None else shown
        raise _missing(shown, f"no faithmon database at {where} (it holds no faithmon tables)")
    return engine


def holds_records_table(engine: Engine) -> bool:
    """Whether the database has faithmon's records table (any revision of it)."""
    with engine.connect() as connection:
        return inspect(connection).has_table("records")


def _missing(shown: str, reason: str) -> DatabaseUrlError:
    return DatabaseUrlError(shown, reason, "run `faithmon db upgrade` or check the path")


def _first_line(error: object) -> str:
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    return lines[0] if lines else type(error).__name__


def _hint(file: Path | None) -> str:
    if file is not None:
        return f"check that {file} is a SQLite file faithmon may read and write"
    return "check that the server runs and the URL's host, port, user, password and database"


class DeferredSchema:
    """The schema upgraded before the first write, however long the database takes to
    answer: ``ensure`` tries at most once per ``retry_seconds`` and raises
    StoreUnavailable until it succeeds, so the receiver's saves wait in its spool."""

    def __init__(self, engine: Engine, retry_seconds: float = 5.0) -> None:
        self._engine = engine
        self._retry = retry_seconds
        self._lock = threading.Lock()
        self._ready = False
        self._tried_at: float | None = None
        self._reason = ""

    def ensure(self, now: float | None = None) -> None:
        if self._ready:
            return
        clock = time.monotonic() if now is None else now
        with self._lock:
            if self._ready:
                return
            if self._tried_at is not None and clock - self._tried_at < self._retry:
                raise StoreUnavailable(self._reason)
            self._tried_at = clock
            try:
                upgrade(self._engine)
            except SQLAlchemyError as exc:
                cause = getattr(exc, "orig", None) or exc
                self._reason = f"the schema cannot be checked: {type(cause).__name__}"
                raise StoreUnavailable(self._reason) from None
            self._ready = True
            if self._reason:
                logger.info("faithmon: the database answers; schema checked")
