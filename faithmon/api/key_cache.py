"""The API keys a receiver last read, kept beside its spool for a start without the store.

A receiver restarted while the database does not answer still has to tell keys
apart to acknowledge exports into its spool; it reads the keys it last read from
here until the store answers (revocations made meanwhile apply from then on, as
for a running receiver whose store fails). Only what the store holds is written:
prefixes and hashes of keys, never a key. The file is private (0600) and replaced
whole (written aside, then renamed), so a crash never leaves half of it.
"""

from __future__ import annotations

import json
import logging
import os
from dataclasses import asdict, fields
from datetime import datetime
from pathlib import Path
from typing import Any

from ..model import ApiKey

logger = logging.getLogger(__name__)

_DATES = {"created_at", "revoked_at", "last_used_at", "sessions_ended_at"}


def write(path: Path, keys: list[ApiKey]) -> None:
    rows = [
        {k: (v.isoformat() if isinstance(v, datetime) else v) for k, v in asdict(key).items()}
        for key in keys
    ]
    aside = path.with_name(path.name + ".new")
    try:
        fd = os.open(aside, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as out:
            json.dump(rows, out)
            out.flush()
            os.fsync(out.fileno())
        os.replace(aside, path)
    except OSError as exc:
        logger.warning("faithmon: cannot keep the API keys beside the spool (%s)", exc.strerror)


def read(path: Path) -> list[ApiKey] | None:
    """The keys last written, or None when there are none to read."""
    try:
        rows = json.loads(path.read_text())
        names = {f.name for f in fields(ApiKey)}
        return [_key({k: v for k, v in row.items() if k in names}) for row in rows]
    except FileNotFoundError:
        return None
    except (OSError, ValueError, TypeError, AttributeError) as exc:
        logger.warning("faithmon: the API keys kept beside the spool are unreadable (%s)", exc)
        return None


def _key(row: dict[str, Any]) -> ApiKey:
    for name in _DATES & row.keys():
        if row[name] is not None:
            row[name] = datetime.fromisoformat(row[name])
    row["scopes"] = tuple(row["scopes"])
    return ApiKey(**row)
