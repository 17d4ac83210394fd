"""Names that look like settings but are not: a ``FAITHMON_*`` variable or a settings-file key
faithmon does not know is most often a typo, and a typo silently leaves the default in force."""

from __future__ import annotations

import difflib
import tomllib
from collections.abc import Mapping
from pathlib import Path

from .config import CONFIG_FILE_ENV, SETTINGS

STRICT_ENV = "FAITHMON_STRICT"

# Variables faithmon reads that are not settings of its processes.
_ALSO_KNOWN = frozenset(
    {
        CONFIG_FILE_ENV,
        STRICT_ENV,
        # The shim's key, and the keys the deploy files store with `keys create --key-from-env`.
        "FAITHMON_API_KEY",
        "FAITHMON_ADMIN_KEY",
        "FAITHMON_COLLECTOR_KEY",
        # The test suite's switches.
        "FAITHMON_REQUIRE_POSTGRES",
        "FAITHMON_REQUIRE_BROWSER",
        "FAITHMON_TEST_POSTGRES_URL",
        "FAITHMON_SCREENSHOTS",
    }
)


def unknown_names(environ: Mapping[str, str]) -> list[str]:
    """One message per unknown ``FAITHMON_*`` variable or settings-file key, each naming the
    closest real setting when one is close."""
    variables = [s.env for s in SETTINGS]
    messages = []
    for name in sorted(environ):
        if name.startswith("FAITHMON_") and name not in variables and name not in _ALSO_KNOWN:
            messages.append(f"{name} is not a faithmon setting{_closest(name, variables)}")
    path = environ.get(CONFIG_FILE_ENV, "")
    if path:
        keys = {s.env for s in SETTINGS} | {s.field for s in SETTINGS}
        for key in sorted(set(_file_keys(path)) - keys):
            candidates = variables if key.isupper() else [s.field for s in SETTINGS]
            messages.append(f"{path}: {key} is not a faithmon setting{_closest(key, candidates)}")
    return messages


def strict(environ: Mapping[str, str]) -> bool:
    return environ.get(STRICT_ENV, "").strip().lower() in ("1", "true", "yes", "on")


def _closest(name: str, candidates: list[str]) -> str:
    """The candidate fewest typing slips away (a swap of two letters is one slip), the one of
    the same length first, then the most alike; none when every one is too far."""
    limit = max(2, len(name) // 5)
    scored = [
        (
            _slips(name, c),
            abs(len(c) - len(name)),
            -difflib.SequenceMatcher(None, name, c).ratio(),
            c,
        )
        for c in candidates
    ]
    near = [item for item in scored if item[0] <= limit]
    if not near:
        return ""
    return f" (did you mean {min(near)[3]}?)"


def _slips(a: str, b: str) -> int:
    """Insertions, deletions, substitutions and swaps of neighbours turning ``a`` into ``b``."""
    previous2: list[int] = []
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        current = [i] + [0] * len(b)
        for j, cb in enumerate(b, 1):
            current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb))
            if i > 1 and j > 1 and ca == b[j - 2] and a[i - 2] == cb:
                current[j] = min(current[j], previous2[j - 2] + 1)
        previous2, previous = previous, current
    return previous[len(b)]


def _file_keys(path: str) -> list[str]:
    # An unreadable or malformed file is reported by Settings.from_env, with its cause.
    try:
        return list(tomllib.loads(Path(path).read_text()))
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError):
        return []
