"""Parsers of setting values: each takes the text of a variable and returns its value,
or raises ValueError with what is wrong (config.py adds the setting's name)."""

from __future__ import annotations

import os
from collections.abc import Callable


def _rate(value: str) -> float:
    rate = float(value)
    if not 0.0 <= rate <= 1.0:
        raise ValueError("must be between 0.0 and 1.0")
    return rate


def _positive_float(value: str) -> float:
    number = float(value)
    if number <= 0:
        raise ValueError("must be positive")
    return number


def _non_negative_float(value: str) -> float:
    number = float(value)
    if number < 0:
        raise ValueError("must not be negative")
    return number


def _optional_float(value: str) -> float | None:
    return float(value) if value else None


def _threshold(value: str) -> float | None:
    if value.strip().lower() in ("", "auto"):
        return None
    return _positive_float(value)


def _positive_int(value: str) -> int:
    number = int(value)
    if number <= 0:
        raise ValueError("must be a positive integer")
    return number


def _non_negative_int(value: str) -> int:
    number = int(value)
    if number < 0:
        raise ValueError("must not be negative")
    return number


def _processes(value: str) -> int:
    # "auto": a worker process per core, none on one core (0 and 1 mean in-thread).
    if value.strip().lower() == "auto":
        cores = os.cpu_count() or 1
        return cores if cores > 1 else 0
    return _non_negative_int(value)


def _flag(value: str) -> bool:
    lowered = value.lower()
    if lowered in ("1", "true", "yes", "on"):
        return True
    if lowered in ("", "0", "false", "no", "off"):
        return False
    raise ValueError("must be true or false")


def _names(value: str) -> tuple[str, ...]:
    return tuple(name.strip() for name in value.split(",") if name.strip())


def _pairs(value: str) -> tuple[tuple[str, str], ...]:
    pairs = []
    for item in _names(value):
        name, sep, label = item.partition("=")
        if not sep or not name.strip():
            raise ValueError(f"expected label=value items, got {item!r}")
        pairs.append((name.strip(), label.strip()))
    return tuple(pairs)


def _one_of(*choices: str) -> Callable[[str], str]:
    def parse(value: str) -> str:
        if value not in choices:
            raise ValueError(f"must be one of {', '.join(choices)}")
        return value

    return parse


def _level(value: str) -> str:
    return _one_of("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")(value.upper())
