"""Locks between worker processes: one worker per SQLite file, and cluster-wide named
locks (advisory locks on PostgreSQL) so a job runs on one worker at a time."""

from __future__ import annotations

import fcntl
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO

from sqlalchemy import Engine, make_url

from ..errors import ConfigError
from . import Sessions, work


@contextmanager
def sqlite_worker_lock(url: str) -> Iterator[None]:
    """On SQLite one worker is the supported set-up: a second one is refused at start."""
    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite" or not parsed.database:
        yield
        return
    path = Path(parsed.database + ".worker.lock")
    handle: IO[str] = path.open("a")
    try:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise ConfigError(
                f"another faithmon worker already runs on {parsed.database}; on SQLite one "
                "worker is the supported set-up (use PostgreSQL to run several)"
            ) from None
        yield
    finally:
        handle.close()


@contextmanager
def singleton(sessions: Sessions, name: str) -> Iterator[bool]:
    """``work.singleton`` on the engine behind ``sessions``: yields whether the lock is held."""
    bind = sessions.kw["bind"]
    assert isinstance(bind, Engine)
    with work.singleton(bind, name) as held:
        yield held
