"""What the settings read besides the environment: the ``FAITHMON_CONFIG`` file, and the
parts' config dataclasses filled from the parsed settings (``config`` re-exports both)."""

from __future__ import annotations

import tomllib
from dataclasses import fields
from pathlib import Path
from typing import Any, TypeVar

from .errors import ConfigError

_T = TypeVar("_T")


def read_file(path: str, setting: str) -> dict[str, str]:
    """The settings file named by ``setting`` (``path`` empty: none) as raw strings."""
    if not path:
        return {}
    try:
        document = tomllib.loads(Path(path).read_text())
    except OSError as exc:
        raise ConfigError(f"{setting}={path!r}: {exc.strerror}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{setting}={path!r}: not TOML ({exc})") from None
    # Unknown keys are warned about (an error with FAITHMON_STRICT=1) by config_check.
    return {
        key: ",".join(map(str, value)) if isinstance(value, list) else str(value)
        for key, value in document.items()
    }


def part_config(cls: type[_T], settings: object, prefix: str = "", **given: Any) -> _T:
    """A part's config dataclass filled from the settings of the same names, so no part's
    config copies a setting by hand: field ``x`` comes from setting ``prefix + x``, else
    ``x``; ``given`` supplies fields whose value is derived (a unit, a fallback)."""
    values = dict(given)
    for item in fields(cls):  # type: ignore[arg-type]
        if item.name in values:
            continue
        for name in (prefix + item.name, item.name):
            if hasattr(settings, name):
                values[item.name] = getattr(settings, name)
                break
    return cls(**values)
