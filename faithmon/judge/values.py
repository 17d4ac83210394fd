"""Values in text: numbers with their units or currencies, normalised so "500 mg" and
"0.5 g" are one value and "$5" and "€5" are two (the bindings compare these).

Times of day ("16:30", "4 pm"), dates ("3 March"), weekdays ("Mondays", "Monday to
Friday") and the "one" an answer leaves unsaid ("every hour", "per month", "daily") are
values too: each is a fact a claim binds to its subject, and a changed one is a changed
fact. The digits of a code ("A17", "K9") are not a value."""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass

from . import numbers as num
from . import support as s
from . import text as t

_CURRENCY = {"$": "usd", "€": "eur", "£": "gbp", "¥": "jpy", "₹": "inr"}
_CURRENCY_WORDS = {
    "dollar": "usd", "dollars": "usd", "euro": "eur", "euros": "eur", "pound": "gbp",
    "pounds": "gbp", "yen": "jpy", "rupees": "inr", "pence": "gbp", "p": "gbp",
} | {code: code for code in (
    "usd eur gbp jpy inr chf cad aud nzd nok sek dkk pln czk huf zar brl mxn cny hkd sgd "
    "krw try aed sar ils thb idr myr php isk ron bgn"
).split()}  # fmt: skip
# Digit groups joined by hyphens, one of three digits or more: "4410-22", "448-201"
# (not the range "10-15").
_GROUPS = r"\b\d{3,}(?:-\d+)+\b|\b\d+(?:-\d+)*-\d{3,}\b"
# A code naming one thing: letters then digits, digit groups joined by hyphens, or a
# long number ("card ending 7731"), a name with its number ("Kite 13"); ``identifiers``
# leaves out years and dates.
IDENTIFIER = re.compile(
    r"\b[A-Za-z]{1,6}-?\d[\dA-Za-z]*(?:-[\dA-Za-z]+)*\b|" + _GROUPS + r"|\b\d{4,}\b"
    r"|\b[A-Z][a-z]+ \d{1,4}\b(?![.,:-]?\d)"
)
# Digits that are part of a code ("JX-5510", "4410-22"), not a value.
_IN_CODE = re.compile(r"\b[A-Za-z]{1,6}-\d[\dA-Za-z]*(?:-[\dA-Za-z]+)*\b|" + _GROUPS)
# An ISO currency code written before its amount: "CHF 180", "EUR 1,200".
_CODE_FIRST = re.compile(r"\b([A-Z]{3})\s?(?=\d)")
# Temperature and micro signs, written as words so the units read them.
_SIGNS = (("°C", "celsius"), ("° C", "celsius"), ("ºC", "celsius"), ("°F", "fahrenheit"),
          ("° F", "fahrenheit"), ("ºF", "fahrenheit"), ("µg", "mcg"), ("μg", "mcg"))  # fmt: skip
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
    "week": ("time", 604800.0), "month": ("time", 2629800.0), "year": ("time", 31557600.0),
    "kb": ("data", 1e3), "mb": ("data", 1e6),
    "gb": ("data", 1e9), "tb": ("data", 1e12), "%": ("percent", 1.0),
    "percent": ("percent", 1.0), "mcg": ("mass", 1e-6), "microgram": ("mass", 1e-6),
    "lb": ("mass", 453.592), "lbs": ("mass", 453.592), "oz": ("mass", 28.3495),
    "mi": ("length", 1609.34), "mile": ("length", 1609.34), "ft": ("length", 0.3048),
    "inch": ("length", 0.0254), "celsius": ("celsius", 1.0), "fahrenheit": ("fahrenheit", 1.0),
    "kbps": ("rate", 1e3), "mbps": ("rate", 1e6), "gbps": ("rate", 1e9),
    "mah": ("charge", 0.001), "ah": ("charge", 1.0), "w": ("power", 1.0), "kw": ("power", 1e3),
    "kwh": ("energy", 1.0), "mwh": ("energy", 1e3), "mph": ("speed", 1.609), "kph": ("speed", 1.0),
    "times": ("count", 1.0),
}  # fmt: skip
# How often, in words: "twice" is "2 times", so "three times in a row" differs from it.
_OFTEN = re.compile(r"\b(twice|thrice)\b", re.IGNORECASE)
_OFTEN_TIMES = {"twice": "2 times", "thrice": "3 times"}
_NUMBER_WORDS = "|".join(sorted(num.WORD_VALUES, key=len, reverse=True))
_VALUE = re.compile(
    rf"(?P<cur>[$€£¥₹]|[a-z]{{3}}§)?\s?(?:(?<![A-Za-z\d.,_])(?P<num>\d[\d,]*(?:\.\d+)?)"
    rf"|\b(?P<word>{_NUMBER_WORDS})\b)"
    r"(?:\s?(?:-|to|and|or)\s?(?P<upper>\d[\d,]*(?:\.\d+)?))?"
    r"(?:(?P<pct>\s?%)|[\s-]?(?P<unit>[A-Za-z]+)\b)?",
    re.IGNORECASE,
)
# Words after a number that are not its unit.
_NOT_UNITS = s.GENERIC_WORDS | frozenset(
    """a an the of to in on at by for and or per from with as is are was were be up than
    has have had does do did can will would may must should
    time more less over under about around""".split()
)


_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_DAY = r"(?:mon|tues?|wed(?:nes)?|thu(?:rs?)?|fri|sat(?:ur)?|sun)(?:day)?s?"
_WEEKDAY = re.compile(
    rf"\b(?P<first>{_DAY})\b(?:\s?(?:-|–|to|through|thru)\s?\b(?P<last>{_DAY})\b)?", re.I
)
_CLOCK = re.compile(
    r"(?<![\d.:])(?P<h>\d{1,2})(?::(?P<m>\d{2}))?\s?(?P<half>[ap]\.?m\b\.?)"
    r"|(?<![\d.:])(?P<h24>\d{1,2}):(?P<m24>\d{2})(?![\d:])",
    re.I,
)
_MONTH = r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*"
_DATE = re.compile(
    rf"\b(?P<d>\d{{1,2}})(?:st|nd|rd|th)?(?: of)? (?P<month>{_MONTH})\b"
    rf"|\b(?P<month2>{_MONTH}) (?P<d2>\d{{1,2}})(?:st|nd|rd|th)?\b(?![:\d])",
    re.I,
)
_ONE = re.compile(
    r"\b(?:every|per|each|an?|once an?)\s+(?P<unit>second|minute|hour|day|week|month|year)\b"
    r"|\b(?P<ly>hourly|daily|weekly|monthly|yearly|annually|annual)\b",
    re.I,
)
_LY = {"hourly": "hour", "daily": "day", "weekly": "week", "monthly": "month",
       "yearly": "year", "annually": "year", "annual": "year"}  # fmt: skip


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
    shown: float | None = None
    """The number as written, before its unit's factor: 250 for "250 mg" and "250 g"."""

    def within(self, other: Value) -> bool:
        if self.unit is not None and other.unit is not None and self.unit != other.unit:
            return False
        mine, low, high = self.number, other.number, other.upper
        if (self.unit is None) != (other.unit is None):
            # "aged 8" against "6 to 11 years": compare the numbers as written.
            mine, low = self._written(self.number), other._written(other.number)
            high = None if other.upper is None else other._written(other.upper)
        if high is not None:
            return low <= mine <= high
        return abs(mine - low) <= 1e-9 * max(1.0, abs(low))

    def _written(self, number: float) -> float:
        """``number``, one of this value's, before its unit's factor."""
        if self.shown is None or not self.number:
            return number
        return number * self.shown / self.number


def _weekday(name: str) -> int:
    return next(i for i, day in enumerate(_WEEKDAYS) if day.startswith(name.lower()[:3]))


def _special(text: str) -> tuple[list[Value], str]:
    """Times of day, dates, weekdays and unsaid ones, and ``text`` without them."""
    found: list[Value] = []

    def cut(match: re.Match[str]) -> str:
        return " " * len(match.group())

    def clock(match: re.Match[str]) -> str:
        if match.group("h24"):
            hour, minute = int(match.group("h24")), int(match.group("m24"))
        else:
            hour, minute = int(match.group("h")) % 12, int(match.group("m") or 0)
            hour += 12 if match.group("half").lower().startswith("p") else 0
        if hour < 24 and minute < 60:
            found.append(Value(hour * 60.0 + minute, "clock", shown=hour * 60.0 + minute))
        return cut(match)

    def date(match: re.Match[str]) -> str:
        month = (match.group("month") or match.group("month2")).lower()[:3]
        day = int(match.group("d") or match.group("d2"))
        number = next(i for i, m in enumerate(num.MONTHS, 1) if m.startswith(month)) * 100
        found.append(Value(float(number + day), "date", shown=float(number + day)))
        return cut(match)

    def weekday(match: re.Match[str]) -> str:
        first = _weekday(match.group("first"))
        last = _weekday(match.group("last")) if match.group("last") else None
        found.append(Value(float(first), "weekday", None if last is None else float(last)))
        return cut(match)

    def one(match: re.Match[str]) -> str:
        unit = (match.group("unit") or _LY[match.group("ly").lower()]).lower()
        found.append(Value(_UNITS[unit][1], "time", shown=1.0))
        return cut(match)

    text = _CLOCK.sub(clock, text)
    text = _DATE.sub(date, text)
    text = _WEEKDAY.sub(weekday, text)
    return found, _ONE.sub(one, text)


def _singulars(name: str) -> tuple[str, ...]:
    """ "minutes" → "minutes", "minute", "minut": the forms a unit may be listed under."""
    if name.endswith("es"):
        return (name, name[:-1], name[:-2])
    return (name, name[:-1]) if name.endswith("s") else (name,)  # "has" is not "h"


@functools.lru_cache(maxsize=16384)
def values(text: str) -> tuple[Value, ...]:
    """The numbers of ``text`` with their normalised units and currencies."""
    for sign, spelled in _SIGNS:
        text = text.replace(sign, spelled)
    text = _OFTEN.sub(lambda m: _OFTEN_TIMES[m.group(1).lower()], text)
    text = _IN_CODE.sub(lambda m: " " * len(m.group()), text)
    text = _CODE_FIRST.sub(
        lambda m: (
            m.group() if m.group(1).lower() not in _CURRENCY_WORDS else f"{m.group(1).lower()}§"
        ),
        text,
    )
    found, text = _special(s.REFERENCE.sub(" ", text))
    for match in _VALUE.finditer(text):
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
            cur = match.group("cur")
            unit = _CURRENCY.get(cur) or _CURRENCY_WORDS[cur.rstrip("§")]
        elif match.group("pct"):
            unit = "percent"
        elif name in _CURRENCY_WORDS:
            unit = _CURRENCY_WORDS[name]
        elif name:
            key = next((k for k in _singulars(name) if k in _UNITS), s.stem(name))
            if key in _UNITS:
                unit, factor = _UNITS[key]
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
                number,
            )
        )
    return tuple(found)


# What a value can measure: a unit of one of these, or a currency.
DIMENSIONS = frozenset(
    {d for d, _ in _UNITS.values()} | set(_CURRENCY.values()) | set(_CURRENCY_WORDS.values())
)


def swapped(value: Value, said: Sequence[Value]) -> bool:
    """``said`` writes ``value``'s number with another unit or currency of a measure:
    "250 g" against "250 mg", "€20" against "$20", "20 minutes" against "20 hours"."""
    if value.unit not in DIMENSIONS or value.shown is None:
        return False
    return not any(value.within(v) for v in said) and any(
        v.shown == value.shown
        and v.unit in DIMENSIONS
        and (v.unit != value.unit or v.number != value.number)
        and (v.unit in _MEASURES) == (value.unit in _MEASURES)
        for v in said
    )


# Dimensions a unit swap happens within; a currency swaps with another currency.
_MEASURES = frozenset({"mass", "volume", "length", "time", "data", "percent"})


@functools.lru_cache(maxsize=16384)
def identifiers(text: str) -> frozenset[str]:
    """Codes that name one thing: "A17", "INC-2207", "4410-22", "Kite 13", "7731"."""
    found = set()
    for match in IDENTIFIER.findall(text):
        code = match.lower()
        first = code.split(" ")[0]
        if all(part.isdigit() and 1900 <= int(part) < 2100 for part in code.split("-")[:1]) and (
            code.replace("-", "").isdigit() and len(code.split("-")[-1]) in (2, 4)
        ):
            continue  # a year, or years: "2014-15", "1998-2004"
        if " " in code and (first in t.STOPWORDS or first[:3] in _CALENDAR_PREFIXES):
            continue  # "In 2015", "March 3"
        found.add(code)
    return frozenset(found)


_CALENDAR_PREFIXES = frozenset([m[:3] for m in num.MONTHS] + [d[:3] for d in _WEEKDAYS])
