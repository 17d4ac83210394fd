"""Values in text: numbers with their units or currencies, normalised so "500 mg" and
"0.5 g" are one value and "$5" and "€5" are two (the bindings compare these)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from . import numbers as num
from . import support as s

_CURRENCY = {"$": "usd", "€": "eur", "£": "gbp", "¥": "jpy", "₹": "inr"}
_CURRENCY_WORDS = {
    "dollar": "usd", "dollars": "usd", "usd": "usd", "euro": "eur", "euros": "eur",
    "eur": "eur", "pound": "gbp", "pounds": "gbp", "gbp": "gbp", "yen": "jpy",
    "rupees": "inr", "inr": "inr",
}  # fmt: skip
# unit → (dimension, factor to the dimension's base unit)
_UNITS: dict[str, tuple[str, float]] = {
    "mg": ("mass", 0.001), "milligram": ("mass", 0.001), "g": ("mass", 1.0),
    "gram": ("mass", 1.0), "kg": ("mass", 1000.0), "kilogram": ("mass", 1000.0),
    "ml": ("volume", 0.001), "millilitre": ("volume", 0.001), "milliliter": ("volume", 0.001),
    "l": ("volume", 1.0), "litre": ("volume", 1.0), "liter": ("volume", 1.0),
    "mm": ("length", 0.001), "cm": ("length", 0.01), "m": ("length", 1.0),
    "metre": ("length", 1.0), "meter": ("length", 1.0), "km": ("length", 1000.0),
    "kilometre": ("length", 1000.0), "kilometer": ("length", 1000.0),
    "second": ("time", 1.0), "sec": ("time", 1.0), "s": ("time", 1.0),
    "minute": ("time", 60.0), "min": ("time", 60.0), "hour": ("time", 3600.0),
    "h": ("time", 3600.0), "hr": ("time", 3600.0), "day": ("time", 86400.0),
    "week": ("time", 604800.0), "kb": ("data", 1e3), "mb": ("data", 1e6),
    "gb": ("data", 1e9), "tb": ("data", 1e12), "%": ("percent", 1.0),
    "percent": ("percent", 1.0),
}  # fmt: skip
_NUMBER_WORDS = "|".join(sorted(num.WORD_VALUES, key=len, reverse=True))
_VALUE = re.compile(
    rf"(?P<cur>[$€£¥₹])?\s?(?:(?P<num>\d[\d,]*(?:\.\d+)?)|\b(?P<word>{_NUMBER_WORDS})\b)"
    r"(?:\s?(?:-|to|and|or)\s?(?P<upper>\d[\d,]*(?:\.\d+)?))?"
    r"(?:(?P<pct>\s?%)|[\s-]?(?P<unit>[A-Za-z]+)\b)?",
    re.IGNORECASE,
)
# Words after a number that are not its unit.
_NOT_UNITS = s.GENERIC_WORDS | frozenset(
    """a an the of to in on at by for and or per from with as is are was were be up than
    times time more less over under about around""".split()
)


@dataclass(frozen=True, slots=True)
class Value:
    """A number with what it counts: ``("0.5", "mass")`` for "500 mg"."""

    number: float
    unit: str | None
    """A dimension ("mass"), a currency ("usd"), a counted noun's stem, or None."""
    upper: float | None = None
    """The top of a range ("4 to 6 hours"), else None."""
    worded: bool = False
    """Written as a word ("ten"): a value only when it counts something."""

    def within(self, other: Value) -> bool:
        if self.unit is not None and other.unit is not None and self.unit != other.unit:
            return False
        if other.upper is not None:
            return other.number <= self.number <= other.upper
        return abs(self.number - other.number) <= 1e-9 * max(1.0, abs(other.number))


def values(text: str) -> tuple[Value, ...]:
    """The numbers of ``text`` with their normalised units and currencies."""
    found = []
    for match in _VALUE.finditer(s.REFERENCE.sub(" ", text)):
        raw = match.group("num")
        worded = raw is None
        if worded:
            word = num.word_value(match.group("word").lower())
            if word is None:
                continue
            raw = word
        try:
            number = float(raw.replace(",", ""))
        except ValueError:
            continue
        unit: str | None = None
        factor = 1.0
        name = (match.group("unit") or "").lower()
        if match.group("cur"):
            unit = _CURRENCY[match.group("cur")]
        elif match.group("pct"):
            unit = "percent"
        elif name in _CURRENCY_WORDS:
            unit = _CURRENCY_WORDS[name]
        elif name:
            key = name if name in _UNITS else s.stem(name)
            if key.endswith("s") and key[:-1] in _UNITS:
                key = key[:-1]
            if name in _UNITS or key in _UNITS:
                unit, factor = _UNITS.get(name) or _UNITS[key]
            elif name not in _NOT_UNITS and name not in s.UNIT_WORDS:
                unit = s.stem(num.MONTH_ABBREVIATIONS.get(name, name))
        if worded and unit is None:
            continue  # "one of them": not a value
        upper = match.group("upper")
        found.append(
            Value(
                number * factor,
                unit,
                float(upper.replace(",", "")) * factor if upper else None,
                worded,
            )
        )
    return tuple(found)


# What a value can measure: a unit of one of these, or a currency.
DIMENSIONS = frozenset(
    {d for d, _ in _UNITS.values()} | set(_CURRENCY.values()) | set(_CURRENCY_WORDS.values())
)
