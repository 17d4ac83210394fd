"""Where faithmon keeps its state: one data directory.

The data directory (``FAITHMON_DATA_DIR`` or ``faithmon --data-dir``, ``./faithmon-data``
by default) holds the embedded database, the scrub key file, the receiver's spool and the
worker's heartbeat, so processes started in different folders share them when they share
it: state that followed the working directory gave a second process a second scrub key,
and one e-mail two pseudonyms. Each path setting still names its own file; a relative one
is inside the data directory (as PostgreSQL reads the paths in its configuration), and an
unset ``FAITHMON_DATABASE_URL`` is ``faithmon.db`` there. The folder is made, mode 0700,
by the first command that writes into it.
"""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .config import Settings

DATA_DIR = "faithmon-data"
DATABASE_FILE = "faithmon.db"
KEY_FILE = "faithmon-scrub.key"
SPOOL_DIR = "faithmon-spool"
HEARTBEAT_FILE = "faithmon-worker.heartbeat"
_PATHS = ("scrub_key_file", "spool_dir", "worker_heartbeat_file")
"""The settings that name a file or folder of state."""


def folder(value: str) -> str:
    """FAITHMON_DATA_DIR's parser: empty would put the state back in the working directory."""
    if not value:
        raise ValueError("must name a folder")
    return value


def database_url(data_dir: str | Path) -> str:
    """The URL of the embedded database in ``data_dir`` (FAITHMON_DATABASE_URL unset)."""
    return f"sqlite:///{Path(data_dir) / DATABASE_FILE}"


def place(values: dict[str, Any]) -> None:
    """Settle the parsed path settings in the data dir, which is made absolute: messages
    and the scrub key's recorded origin then say where, whatever folder reads them."""
    data_dir = os.path.abspath(os.path.expanduser(values["data_dir"]))
    values["data_dir"] = data_dir
    if not values["database_url"]:
        values["database_url"] = database_url(data_dir)
    for name in _PATHS:
        if values[name]:  # empty stays empty: FAITHMON_SPOOL_DIR= turns the spool off
            values[name] = os.path.join(data_dir, os.path.expanduser(values[name]))


def make_room(path: str | Path) -> None:
    """Make the folder ``path`` goes into when it is missing, mode 0700: it may hold the
    scrub key, and the records a spool keeps."""
    Path(path).parent.mkdir(mode=0o700, parents=True, exist_ok=True)


def make_room_for_database(settings: Settings) -> None:
    """Make the data dir when the database to open is its own (FAITHMON_DATABASE_URL
    unset): a missing folder that a URL names is a typo to report instead."""
    if settings.database_url == database_url(settings.data_dir):
        make_room(Path(settings.data_dir) / DATABASE_FILE)


def earlier_state(settings: Settings, cwd: Path) -> tuple[Settings, list[str]]:
    """``settings`` using what an earlier faithmon kept in the working directory where the
    data dir does not hold it yet, and a one-line warning for each such file.

    Used, not refused: an upgrade must neither stop a running receiver (its exporters
    would drop spans) nor make a second scrub key beside the one the stored pseudonyms were
    made with; and a process that still ends up with another key is refused by the key's
    fingerprint in the store. The heartbeat is left out: the worker writes a new one
    within seconds.
    """
    data_dir = Path(settings.data_dir)
    changes: dict[str, Any] = {}
    notes = []
    for field, name in (
        ("database_url", DATABASE_FILE),
        ("scrub_key_file", KEY_FILE),
        ("spool_dir", SPOOL_DIR),
    ):
        url = field == "database_url"
        default = database_url(data_dir) if url else str(data_dir / name)
        old = cwd / name
        if getattr(settings, field) != default or (data_dir / name).exists() or not old.exists():
            continue
        changes[field] = database_url(cwd) if url else str(old)
        notes.append(
            f"using {old} from the working directory, where faithmon kept it before its "
            f"data dir; move it into {data_dir} (mv {name}{'*' if url else ''} {data_dir}/) "
            "so that every process started with that data dir finds it"
        )
    return replace(settings, **changes), notes
