"""Parsers of setting values: each takes the text of a variable and returns its value,
or raises ValueError with what is wrong (config.py adds the setting's name); how a
setting is declared (``Setting``, ``setting``), which config.py's fields use; and
``default_of``, which reads a setting's default off the part that declares it. Every
name here is public: it is the API config.py (and a new setting) builds on."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import MISSING, dataclass, field, fields
from typing import Any


def rate(value: str) -> float:
    rate = float(value)
    if not 0.0 <= rate <= 1.0:
        raise ValueError("must be between 0.0 and 1.0")
    return rate


def positive_float(value: str) -> float:
    number = float(value)
    if number <= 0:
        raise ValueError("must be positive")
    return number


def non_negative_float(value: str) -> float:
    number = float(value)
    if number < 0:
        raise ValueError("must not be negative")
    return number


def optional_float(value: str) -> float | None:
    return float(value) if value else None


def threshold(value: str) -> float | None:
    if value.strip().lower() in ("", "auto"):
        return None
    return positive_float(value)


def positive_int(value: str) -> int:
    number = int(value)
    if number <= 0:
        raise ValueError("must be a positive integer")
    return number


def non_negative_int(value: str) -> int:
    number = int(value)
    if number < 0:
        raise ValueError("must not be negative")
    return number


def processes(value: str) -> int:
    # "auto": a worker process per core, none on one core (0 and 1 mean in-thread).
    if value.strip().lower() == "auto":
        cores = os.cpu_count() or 1
        return cores if cores > 1 else 0
    return non_negative_int(value)


def flag(value: str) -> bool:
    lowered = value.lower()
    if lowered in ("1", "true", "yes", "on"):
        return True
    if lowered in ("", "0", "false", "no", "off"):
        return False
    raise ValueError("must be true or false")


def names(value: str) -> tuple[str, ...]:
    return tuple(name.strip() for name in value.split(",") if name.strip())


def pairs(value: str) -> tuple[tuple[str, str], ...]:
    pairs = []
    for item in names(value):
        name, sep, label = item.partition("=")
        if not sep or not name.strip():
            raise ValueError(f"expected label=value items, got {item!r}")
        pairs.append((name.strip(), label.strip()))
    return tuple(pairs)


def one_of(*choices: str) -> Callable[[str], str]:
    def parse(value: str) -> str:
        if value not in choices:
            raise ValueError(f"must be one of {', '.join(choices)}")
        return value

    return parse


def level(value: str) -> str:
    return one_of("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")(value.upper())


@dataclass(frozen=True, slots=True)
class Setting:
    env: str
    field: str
    default: str
    parse: Callable[[str], Any]
    help: str


KEEP_RULES = "app,empty_retrieval,error,negative_feedback,low_retrieval_score"


def optional_price(value: str) -> float | None:
    # Unset is not 0: a cost of $0 would claim a price nobody gave.
    return non_negative_float(value) if value else None


def cascade_bar(value: str) -> float:
    bar = float(value)
    if not 0.0 < bar <= 1.0:
        raise ValueError("must be above 0.0 and at most 1.0")
    return bar


CITATION_STYLES = ("numeric", "id", "footnote", "link")


def citation_style(value: str) -> str:
    words = {w.strip().lower() for w in value.split(",") if w.strip()}
    if words in ({"all"}, {"off"}) or (words and words <= set(CITATION_STYLES)):
        return ",".join(sorted(words))
    raise ValueError(f"must be all, off, or a comma list of {', '.join(CITATION_STYLES)}")


def setting(env: str, default: str, parse: Callable[[str], Any], help: str) -> Any:
    # The declaration rides on the field, so a setting is written in one place; the
    # field's name is filled in when SETTINGS is read off the class below.
    return field(metadata={"setting": Setting(env, "", default, parse, help)})


def default_of(part: type[Any], name: str, none: str = "") -> str:
    """The default of field ``name`` of the dataclass ``part``, as a setting's text.

    A part that can be used on its own (a judge from Python, the drift functions, the read
    API's fallback) keeps its defaults, and may not import the settings; so its setting
    reads the default from it, and each default is declared once. ``none`` is how the
    setting writes a default of None ("auto" for a threshold derived when unset).
    """
    declared = {item.name: item for item in fields(part)}
    if name not in declared or declared[name].default is MISSING:
        raise TypeError(f"{part.__name__}.{name} is not a field with a plain default")
    value = declared[name].default
    if value is None:
        return none
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        # 30.0 is written "30", as the settings (and the README's table) always were.
        return str(int(value)) if value.is_integer() else repr(value)
    if isinstance(value, int | str):
        return str(value)
    if isinstance(value, tuple) and all(isinstance(item, str) for item in value):
        return ",".join(value)
    raise TypeError(f"{part.__name__}.{name}: no setting text for {value!r}")
