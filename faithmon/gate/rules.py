"""What a gate holds the cases to: from flags, or a ``[gate]`` table in a TOML file.

```toml
[gate]
min_mean = 0.85                    # the dataset's mean strict score
min_percentile = ["10:0.8"]        # the 10th percentile of the strict scores at least 0.8
max_critical_unsupported = 0       # critical claims not supported, over every case
baseline = "results/main.jsonl"    # relative to this file
max_drop = 0.05                    # no case and no aggregate this far below the baseline
allow_dataset_change = false
require_proven = false             # an unproven judge configuration: exit 3
```

A flag given on the command line wins over the file's key. Per-case minimums, critical
cases and expected verdicts come with the cases themselves.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any

from .errors import GateInputError


@dataclass(frozen=True, slots=True)
class Percentile:
    """The ``at``-th percentile (0 to 100) of the strict scores is at least ``minimum``."""

    at: float
    minimum: float

    @property
    def name(self) -> str:
        return f"p{self.at:g}"


@dataclass(frozen=True, slots=True)
class Rules:
    min_mean: float | None = None
    min_percentiles: tuple[Percentile, ...] = ()
    max_critical_unsupported: int = 0
    """Critical claims not supported, over every case; a claim is critical when a severity
    rule marked it (amounts, dates, dosages...) or its case is ``critical``."""
    baseline: Path | None = None
    max_drop: float | None = None
    allow_dataset_change: bool = False
    require_proven: bool = False

    def check(self) -> Rules:
        """These rules, or GateInputError saying what does not fit."""
        if (self.baseline is None) != (self.max_drop is None):
            raise GateInputError("--baseline and --max-drop go together: give both or neither")
        return self


def fraction(value: Any, name: str) -> float:
    """A score bound from 0 to 1."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
        raise GateInputError(f"{name} must be a number from 0 to 1, not {value!r}")
    return float(value)


def parse_percentile(text: str, name: str = "--min-percentile") -> Percentile:
    """``P:X`` (``10:0.8``): the P-th percentile at least X."""
    at, sep, minimum = str(text).partition(":")
    try:
        if not sep:
            raise ValueError
        point, bound = float(at), float(minimum)
    except ValueError:
        raise GateInputError(f"{name} takes P:X (e.g. 10:0.8), not {text!r}") from None
    if not 0 <= point <= 100:
        raise GateInputError(f"{name}: the percentile must be from 0 to 100, not {at}")
    return Percentile(point, fraction(bound, f"{name} {text}: X"))


def _count(value: Any, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise GateInputError(f"{name} must be a whole number, 0 or more, not {value!r}")
    return value


def _flag(value: Any, name: str) -> bool:
    if not isinstance(value, bool):
        raise GateInputError(f"{name} must be true or false, not {value!r}")
    return value


_KEYS = {f.name for f in fields(Rules)} - {"min_percentiles"} | {"min_percentile"}


def load_rules(path: Path) -> Rules:
    """The ``[gate]`` table of a TOML file; GateInputError for an unreadable file, a missing
    table, an unknown key or a value of the wrong kind."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise GateInputError(f"cannot read {path}: {exc.strerror}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise GateInputError(f"{path}: not TOML ({exc})") from None
    table = data.get("gate")
    if not isinstance(table, dict):
        raise GateInputError(f"{path}: no [gate] table")
    unknown = sorted(set(table) - _KEYS)
    if unknown:
        raise GateInputError(
            f"{path}: [gate] has no key {unknown[0]!r}; keys: {', '.join(sorted(_KEYS))}"
        )
    where = f"{path}: [gate]"
    rules = Rules()
    if "min_mean" in table:
        rules = replace(rules, min_mean=fraction(table["min_mean"], f"{where} min_mean"))
    if "min_percentile" in table:
        given = table["min_percentile"]
        texts = given if isinstance(given, list) else [given]
        found = tuple(parse_percentile(t, f"{where} min_percentile") for t in texts)
        rules = replace(rules, min_percentiles=found)
    if "max_critical_unsupported" in table:
        count = _count(table["max_critical_unsupported"], f"{where} max_critical_unsupported")
        rules = replace(rules, max_critical_unsupported=count)
    if "baseline" in table:
        if not isinstance(table["baseline"], str) or not table["baseline"]:
            raise GateInputError(f"{where} baseline must be a path")
        rules = replace(rules, baseline=path.parent / table["baseline"])
    if "max_drop" in table:
        rules = replace(rules, max_drop=fraction(table["max_drop"], f"{where} max_drop"))
    if "allow_dataset_change" in table:
        allowed = _flag(table["allow_dataset_change"], f"{where} allow_dataset_change")
        rules = replace(rules, allow_dataset_change=allowed)
    if "require_proven" in table:
        required = _flag(table["require_proven"], f"{where} require_proven")
        rules = replace(rules, require_proven=required)
    return rules


def with_flags(rules: Rules, **flags: Any) -> Rules:
    """``rules`` with every flag that was given (not None, not empty, not False) over it."""
    given = {k: v for k, v in flags.items() if v is not None and v != () and v is not False}
    return replace(rules, **given).check()
