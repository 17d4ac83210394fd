"""Quotations in an answer, checked by string, never by a judge.

A passage in straight or curly double quotes (or guillemets, or curly single quotes),
or a block-quote line (``> …``), of at least ``MIN_WORDS`` words is a quotation. It
must appear in its source after normalisation: Unicode forms, case, whitespace and
punctuation are ignored, nothing else is.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

MIN_WORDS = 4
_QUOTED = re.compile(
    r"\"([^\"\n]{3,2000})\"|\u201c([^\u201c\u201d\n]{3,2000})\u201d|"
    r"\u00ab([^\u00ab\u00bb\n]{3,2000})\u00bb|(?<!\w)\u2018([^\u2018\u2019\n]{3,2000})\u2019(?!\w)"
)
_BLOCK = re.compile(r"^\s{0,3}>\s?(.+)$", re.M)
_PUNCT = re.compile(r"[^\w\s]+")
_SPACE = re.compile(r"\s+")


def folded(text: str) -> str:
    """NFKC, case-folded, punctuation dropped, single spaces."""
    text = unicodedata.normalize("NFKC", text).casefold()
    return _SPACE.sub(" ", _PUNCT.sub(" ", text)).strip()


@dataclass(frozen=True, slots=True)
class Quotation:
    passage: str


def quotations(text: str) -> list[Quotation]:
    """The quotations of ``text`` long enough to check, in order."""
    found = [next(g for g in m.groups() if g is not None) for m in _QUOTED.finditer(text)]
    found += [m[1] for m in _BLOCK.finditer(text)]
    return [Quotation(q.strip()) for q in found if len(folded(q).split()) >= MIN_WORDS]


def source_of(quotation: Quotation, chunks: Sequence[str], allowed: Sequence[int]) -> int | None:
    """The first of ``allowed`` chunks that holds the passage; None when none does."""
    needle = folded(quotation.passage)
    return next((i for i in allowed if needle and f" {needle} " in f" {folded(chunks[i])} "), None)
