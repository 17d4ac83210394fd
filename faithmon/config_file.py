"""What the settings read besides the environment: the ``FAITHMON_CONFIG`` file, where a
setting's text is looked for in order, and the parts' config dataclasses filled from the
parsed settings (``config`` re-exports ``part_config``)."""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from dataclasses import fields
from pathlib import Path
from typing import Any, TypeVar

from .config_values import Setting
from .errors import ConfigError

_T = TypeVar("_T")


def raw_value(
    setting: Setting, env: Mapping[str, str], from_file: Mapping[str, str], file: str
) -> tuple[str, str]:
    """A setting's text and where it came from: the environment, else the settings
    ``file`` (read into ``from_file``), else its default."""
    raw = env.get(setting.env)
    if raw is not None:
        return raw, setting.env
    raw = from_file.get(setting.env, from_file.get(setting.field))
    if raw is not None:
        return raw, f"{setting.env} (in {file})"
    return setting.default, setting.env


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
    ``x``; ``given`` supplies fields whose value is derived (a unit, a fallback).

    A field neither matched nor given is an error (TypeError: a wiring bug, not a bad
    setting): falling back to the part's own default would let a setting added under
    another name be ignored without a word.
    """
    values = dict(given)
    for item in fields(cls):  # type: ignore[arg-type]
        if item.name in values:
            continue
        for name in (prefix + item.name, item.name):
            if hasattr(settings, name):
                values[item.name] = getattr(settings, name)
                break
        else:
            tried = " or ".join(dict.fromkeys((prefix + item.name, item.name)))
            raise TypeError(
                f"{cls.__name__}.{item.name} matches no setting ({tried}): declare the "
                "setting, or pass the field to part_config"
            )
    return cls(**values)
