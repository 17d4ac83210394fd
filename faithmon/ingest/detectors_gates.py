"""Cheap tests, shared by the detectors, that a text cannot hold what a costly pattern finds.

Each detector runs nine or so regular expressions over every text, and ``re`` pays per
character for a pattern that starts with a class (``\\d``, ``[A-Za-z]``): about 10 µs a
kilobyte each, most of the scrubber's cost on knowledge-base chunks that hold no PII.
These gates answer for several detectors at once from one pass over the text, and each
is a necessary condition of its patterns, so skipping a pattern never loses a finding.

An ASCII text gets a *shape* (digits as ``0``, letters as ``a``, other bytes kept) and its
lower-case letter runs; on the shape, patterns start with a literal, which ``re`` skips
to. A text with other characters is not gated where ``\\d`` or a letter class could
match them (Unicode digits and letters): those detectors then run in full.

The results are cached for the last texts seen, since every detector asks about the same
text in turn.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from functools import lru_cache

from .detectors_common import lowered

_SHAPE = bytes(
    ord("0") if chr(c).isdigit() else ord("a") if chr(c).isalpha() else c for c in range(128)
) + bytes(range(128, 256))
_LETTERS = bytes(c if chr(c).isalpha() else 32 for c in range(128)) + b" " * 128
# The union of the numeric candidates: a phone number (``\d[\d ().\-/]{5,20}\d``), a card
# (``\d[\d ./_-]{11,22}\d``), an SSN (``\d{3}-\d\d-\d{4}``) and an IPv4 address (seven to
# fifteen digits and dots) all match it somewhere.
_NUMERIC = r"[\d ().\-/_]{5,22}"
_NUMERIC_TEXT = re.compile(rf"\d{_NUMERIC}\d")
_NUMERIC_SHAPE = re.compile(rb"0[0 ().\-/_]{5,22}0")
_CACHED = 16
_DIGITS_AS_ZERO = bytes(ord("0") if chr(c).isdigit() else c for c in range(128)) + bytes(
    range(128, 256)
)


@lru_cache(maxsize=_CACHED)
def shape(text: str) -> bytes | None:
    """``text`` with ASCII digits as ``0`` and ASCII letters as ``a``; None unless ASCII."""
    return text.encode("ascii").translate(_SHAPE) if text.isascii() else None


@lru_cache(maxsize=_CACHED)
def letter_runs(low: str) -> frozenset[bytes] | None:
    """The maximal runs of letters of a lower-cased ASCII text; None for any other text.

    A word a pattern needs, with a non-letter on each side of it, is one of them."""
    if not low.isascii():
        return None
    return frozenset(low.encode("ascii").translate(_LETTERS).split())


def first_runs(words: frozenset[str]) -> frozenset[bytes]:
    """The first letter run of each word ("anne" of "anne-marie"), to test ``letter_runs``
    against: a word starting after a non-letter and ending before one starts with its run."""
    runs = set()
    for word in words:
        run = re.match(r"[^\W\d_]+", word)
        if run and run.group().isascii():
            runs.add(run.group().encode("ascii"))
    return frozenset(runs)


@lru_cache(maxsize=_CACHED)
def numeric(text: str) -> bool:
    """Whether ``text`` may hold a phone number, a card, a bare SSN or an IPv4 address."""
    shaped = shape(text)
    if shaped is None:
        return _NUMERIC_TEXT.search(text) is not None
    return _NUMERIC_SHAPE.search(shaped) is not None


def iban_start(text: str) -> bool:
    """Whether ``text`` may hold two ASCII letters then two digits with no letter or digit
    just before them, where ``ibans`` takes an IBAN to start."""
    shaped = shape(text)
    if shaped is None:
        return True
    at = shaped.find(b"aa00")
    while at >= 0:
        if not at or shaped[at - 1] not in b"a0":
            return True
        at = shaped.find(b"aa00", at + 1)
    return False


def word_before_number(words: Iterable[str]) -> Callable[[str], bool]:
    """A test that a lower-cased text may hold one of ``words`` then ``,?[ \t]+`` and a
    digit: on an ASCII text, run backwards over its reversed bytes with the digits as
    ``0``, where the pattern starts with that literal instead of a word list."""
    ascii_words = sorted(w[::-1].encode() for w in words if w.isascii())
    pattern = re.compile(rb"0[ \t]+,?(?:" + b"|".join(map(re.escape, ascii_words)) + rb")")

    def test(low: str) -> bool:
        if not low.isascii():
            return True
        return pattern.search(low.encode("ascii").translate(_DIGITS_AS_ZERO)[::-1]) is not None

    return test


def words_or_shape(words: Iterable[str], pattern: re.Pattern[bytes]) -> Callable[[str], bool]:
    """A test that a text may hold one of ``words`` where a pattern takes it (a word of
    letters alone as a whole letter run of the lower-cased text, any other anywhere in
    it), or that ``pattern`` matches its shape; always true for a text that is not ASCII.

    Tighter than a test of ``first_runs``: the "c" of "USB-C" lets no "c/" pass.
    """
    runs = frozenset(w.encode() for w in words if w.isascii() and w.isalpha())
    # The other words by their first letter run, which the text must hold first.
    others: dict[bytes, list[str]] = {}
    for word in words:
        if word.isascii() and not word.isalpha():
            (run,) = first_runs(frozenset((word,))) or {b""}
            if not run:
                raise ValueError(f"{word!r} does not start with a letter")
            others.setdefault(run, []).append(word)
    other_runs = frozenset(others)

    def test(text: str) -> bool:
        low = lowered(text)
        found, shaped = letter_runs(low), shape(text)
        if found is None or shaped is None:
            return True
        if not found.isdisjoint(runs):
            return True
        for run in found & other_runs:
            if any(word in low for word in others[run]):
                return True
        return pattern.search(shaped) is not None

    return test


# What every match of a UK postcode (``addresses._UK_POSTCODE``) is on an ASCII text's shape.
_UK_POSTCODE_SHAPE = re.compile(rb"a0[a0]?[ \t]*0aa")


def uk_postcode(text: str, pattern: re.Pattern[str]) -> bool:
    """Whether ``pattern`` (a UK postcode) matches ``text``, its shape asked first."""
    shaped = shape(text)
    if shaped is not None and _UK_POSTCODE_SHAPE.search(shaped) is None:
        return False
    return pattern.search(text) is not None


def ssn_shape(text: str) -> bool:
    """Whether ``text`` may hold ``ddd-dd-dddd``; always for a text that is not ASCII."""
    shaped = shape(text)
    return shaped is None or b"000-00-0000" in shaped
