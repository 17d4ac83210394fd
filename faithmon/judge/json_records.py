"""Claims against structured records: a chunk that is a JSON object of attributes.

Data-to-text answers describe records such as ``{"OutdoorSeating": false, "WiFi": "no",
"Ambience": {"casual": false}, "Music": null}``. A claim that names an attribute whose
value is false or "no" without negating it ("offers outdoor seating") contradicts
the record; one that names a null attribute ("live music") is unsupported; one that
negates a true attribute ("does not take reservations" against ``true``) contradicts it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Literal

_CAMEL = re.compile(r"(?<=[a-z])(?=[A-Z])")
_KEY_WORDS = re.compile(r"[a-z]+")
# A first word of an attribute name that says the record has it, not what it is.
_PREFIXES = frozenset({"has", "is", "offers", "allows"})
_FALSE = frozenset({"false", "no", "none"})
_TRUE = frozenset({"true", "yes", "free", "paid"})
_NEGATION = re.compile(
    r"\b(?:not|no|never|without|lacks?|lacking|nor|neither|cannot|rather than|instead of)\b"
    r"|n't\b",
    re.IGNORECASE,
)
# Clause boundaries: a negation on the other side of one does not reach the attribute.
_CLAUSE = re.compile(r"[;.]|\b(?:but|while|whereas|however|although|though)\b", re.IGNORECASE)
# Keys that name a schedule or a group of attributes, not an attribute of their own.
_SKIP = frozenset({"hours", "attributes"})
# "outdoor seating is not available", "reservations aren't accepted"
_NEGATED_AFTER = re.compile(
    r"[\w\s,-]{0,60}?\b(?:is|are|was|were)(?:\s+not\b|n't\b)", re.IGNORECASE
)
Value = Literal["false", "null", "true"]


@dataclass(frozen=True, slots=True)
class Attribute:
    chunk: int
    key: str
    value: Value
    pattern: re.Pattern[str]
    quote: str
    """The ``"key": value`` text of the chunk, to cite."""


@dataclass(frozen=True, slots=True)
class Conflict:
    verdict: Literal["contradicted", "unsupported"]
    chunk: int
    quote: str


def attributes(chunks: Sequence[str]) -> list[Attribute]:
    """The boolean and null attributes of the chunks that are JSON objects."""
    found = []
    for index, chunk in enumerate(chunks):
        text = chunk.strip()
        if not text.startswith("{"):
            continue
        try:
            record = json.loads(text)
        except ValueError:
            continue
        for key, value in _leaves(record):
            if key.lower() in _SKIP:
                continue
            kind = _kind(value)
            pattern = _key_pattern(key)
            quote = re.search(rf'"{re.escape(key)}"\s*:\s*[^,}}\]]*', chunk)
            if kind is not None and pattern is not None and quote is not None:
                found.append(Attribute(index, key, kind, pattern, quote.group(0).rstrip()))
    return found


def conflict(claim: str, found: Sequence[Attribute]) -> Conflict | None:
    """The first attribute the claim contradicts or adds without support, if any."""
    for attribute in found:
        match = attribute.pattern.search(claim)
        if match is None:
            continue
        start = max((m.end() for m in _CLAUSE.finditer(claim, 0, match.start())), default=0)
        end = next((m.start() for m in _CLAUSE.finditer(claim, match.end())), len(claim))
        negated = (
            _NEGATION.search(claim, start, match.start()) is not None
            or _NEGATED_AFTER.match(claim, match.end(), end) is not None
        )
        if attribute.value == "true" and negated:
            return Conflict("contradicted", attribute.chunk, attribute.quote)
        if attribute.value == "false" and not negated:
            return Conflict("contradicted", attribute.chunk, attribute.quote)
        if attribute.value == "null" and not negated:
            return Conflict("unsupported", attribute.chunk, attribute.quote)
    return None


def _leaves(value: object) -> Iterator[tuple[str, object]]:
    if isinstance(value, dict):
        for key, inner in value.items():
            if isinstance(inner, dict):
                yield from _leaves(inner)
            elif not isinstance(inner, list):
                yield str(key), inner
    elif isinstance(value, list):
        for item in value:
            yield from _leaves(item)


def _kind(value: object) -> Value | None:
    if value is None:
        return "null"
    text = str(value).strip("'\" ").lower()
    if text in _FALSE:
        return "false"
    if text in _TRUE:
        return "true"
    return None


def _key_pattern(key: str) -> re.Pattern[str] | None:
    """``"RestaurantsTakeOut"`` → matches "takeout", "take-out", "take out"."""
    words = _KEY_WORDS.findall(_CAMEL.sub(" ", key).lower())
    while len(words) > 1 and words[0] in _PREFIXES:
        words = words[1:]
    if len(words) >= 3:
        words = words[1:]  # "RestaurantsTakeOut": the first of three names the record's kind
    if not words or len("".join(words)) < 4:
        return None
    last = words[-1][:-1] if words[-1].endswith("s") and len(words[-1]) > 4 else words[-1]
    body = r"[\s-]*".join([*map(re.escape, words[:-1]), re.escape(last)])
    return re.compile(rf"\b{body}", re.IGNORECASE)
