"""Where the demo writes: a fresh database of its own, never one that holds someone's records."""

from __future__ import annotations

from pathlib import Path

from ..errors import ConfigError
from ..store import engine as store_engine
from ..store import opening
from ..store import records as stored_records
from .app import SERVICE

DEFAULT_DEMO_URL = "sqlite:///faithmon-demo.db"


def prepare(url: str) -> str:
    """Make ``url`` ready for a demo run that starts from nothing; returns the URL to use.

    A SQLite file that only ever held the demo's records is removed and made anew; any
    other database that only ever held them (an earlier demo on PostgreSQL) is emptied.
    A database holding records of another service is refused: the demo would mix its
    synthetic traffic into them.
    """
    file = opening.sqlite_file(url)
    if file is not None and not file.exists():
        return url
    engine = opening.open_engine(url)
    try:
        foreign = False
        if opening.holds_records_table(engine):
            store_engine.upgrade(engine)
            sessions = store_engine.session_factory(engine)
            with sessions() as session:
                foreign = stored_records.holds_other_service(session, SERVICE)
                count = sum(stored_records.counts_by_status(session).values())
            if count and not foreign and file is None:
                store_engine.empty(engine)  # an earlier demo's: start it again
    finally:
        engine.dispose()
    if foreign:
        raise ConfigError(
            f"{opening.shown_url(url)} holds records the demo did not write; the demo writes "
            "only into a fresh database (leave out --database to use ./faithmon-demo.db)"
        )
    if file is not None:
        _remove(file)
    return url


def _remove(file: Path) -> None:
    for suffix in ("", "-wal", "-shm"):
        Path(f"{file}{suffix}").unlink(missing_ok=True)


def as_url(given: str) -> str:
    """``--database`` takes a SQLAlchemy URL or the path of a SQLite file."""
    return given if "://" in given else f"sqlite:///{Path(given).expanduser().resolve()}"
