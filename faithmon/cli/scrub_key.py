"""The scrub key: where it comes from, its fingerprint, and the check that the receivers
and workers of one store all have the same.

The first receiver or worker to run against a store records the key's fingerprint there;
a later one with another key refuses to start, since its pseudonyms would not match the
stored ones. A receiver may start before the database answers: it checks before its first
write instead, and a mismatch found then stops every write (what it acknowledged stays in
its spool) rather than store one record pseudonymised with the other key.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import os
import secrets
import socket
import tempfile
import threading
from datetime import UTC, datetime
from pathlib import Path

from ..config import Settings
from ..config_paths import make_room
from ..errors import ConfigError, ScrubKeyMismatch, StoreUnavailable
from ..model.health import KeyFingerprint
from ..store import Sessions
from ..store import fingerprints as store_fingerprints

logger = logging.getLogger(__name__)

NAME = "scrub_key"
"""The fingerprint's name in the store."""
_LABEL = b"faithmon scrub key fingerprint v1"


def resolve(settings: Settings) -> tuple[bytes, str]:
    """The key and where it came from: FAITHMON_SCRUB_KEY, else the key file, else a new
    key written to the key file (mode 0600; warned about, as pseudonyms change if the
    file is lost and processes on other hosts need it)."""
    if settings.scrub_key:
        key = settings.scrub_key.encode()
        if len(key) < 16:
            raise ConfigError("FAITHMON_SCRUB_KEY must be at least 16 characters")
        return key, "FAITHMON_SCRUB_KEY"
    path = Path(settings.scrub_key_file)
    if not path.exists():
        _generate(path)
    key = path.read_bytes().strip()
    if len(key) < 16:
        raise ConfigError(f"the scrub key in {path} is shorter than 16 bytes")
    return key, f"FAITHMON_SCRUB_KEY_FILE={path}"


def scrub_key(settings: Settings) -> bytes:
    return resolve(settings)[0]


def _generate(path: Path) -> None:
    make_room(path)
    key = secrets.token_hex(32).encode()
    # Written whole, then linked into place: a process starting at the same moment
    # finds no file or the whole key, and the one that links second uses the first's.
    descriptor, written = tempfile.mkstemp(dir=path.parent, prefix=".scrub-key-")  # 0600
    try:
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(key + b"\n")
            handle.flush()
            os.fsync(handle.fileno())
        os.link(written, path)
    except FileExistsError:
        return
    finally:
        os.unlink(written)
    logger.warning(
        "FAITHMON_SCRUB_KEY is not set: generated a scrub key in %s (mode 0600); keep it "
        "secret and give every faithmon process the same key",
        path,
    )


def fingerprint(key: bytes) -> str:
    """HMAC-SHA256 of a fixed label under the key: equal for equal keys, and no hash of
    the key itself to look up. A guessed key is no easier to test against it than
    against any stored pseudonym, which is an HMAC under the same key too."""
    return hmac.new(key, _LABEL, hashlib.sha256).hexdigest()


def _origin(command: str, source: str) -> str:
    return f"faithmon {command} on {socket.gethostname()} (pid {os.getpid()}, key from {source})"


def rotate(sessions: Sessions, settings: Settings) -> tuple[str, KeyFingerprint | None]:
    """Record this process's key as the store's from now on (the key was changed on
    purpose); returns where the key came from and the fingerprint it replaces."""
    key, source = resolve(settings)
    by = _origin("db rotate-scrub-key", source)
    mine = KeyFingerprint(fingerprint(key), by, datetime.now(UTC))
    with sessions.begin() as session:
        return source, store_fingerprints.record(session, NAME, mine)


class KeyCheck:
    """This process's key against the store's fingerprint, asked until the database has
    answered once (``check``; before each write, ``__call__``). A mismatch is kept: the key
    does not change while the process runs, so every later write is refused too."""

    def __init__(self, sessions: Sessions, settings: Settings, command: str) -> None:
        key, self._source = resolve(settings)
        self._mine = fingerprint(key)
        self._by = _origin(command, self._source)
        self._sessions = sessions
        self._lock = threading.Lock()
        self._checked = False
        self._refused: ScrubKeyMismatch | None = None
        self._told = False

    def check(self) -> None:
        """Record the fingerprint, or compare it with the one recorded first; raises
        ScrubKeyMismatch (one line naming the setting and the first recorder), or
        StoreUnavailable while the database does not answer."""
        if self._checked:
            return
        with self._lock:
            if self._refused is not None:
                raise self._refused
            if self._checked:
                return
            mine = KeyFingerprint(self._mine, self._by, datetime.now(UTC))
            try:
                with self._sessions.begin() as session:
                    first = store_fingerprints.first_recorded(session, NAME, mine)
            except Exception as exc:  # asked again before the next write
                raise StoreUnavailable(
                    f"the scrub key cannot be checked: {type(exc).__name__}"
                ) from None
            if first.fingerprint != self._mine:
                self._refused = ScrubKeyMismatch(
                    f"{self._source} is not the scrub key this database's pseudonyms are "
                    f"made with: its fingerprint was recorded by {first.recorded_by} at "
                    f"{first.recorded_at:%Y-%m-%d %H:%M:%S} UTC; give this process that key "
                    "(FAITHMON_SCRUB_KEY or FAITHMON_SCRUB_KEY_FILE)"
                )
                raise self._refused
            self._checked = True

    def __call__(self) -> None:
        try:
            self.check()
        except ScrubKeyMismatch as exc:
            if not self._told:
                self._told = True
                logger.error(
                    "faithmon: %s; nothing is stored until this receiver restarts with it "
                    "(its spool keeps what it acknowledges)",
                    exc,
                )
            raise
