"""Gates in front of the costliest name patterns (``names``): the words a cue or a known
first name needs, tested against the letter runs of an ASCII text (``detectors_gates``)
so that a text holding none of them skips the pattern's pass over every word.

On an ASCII text the letter runs also say *where* a pattern can match: a first name is a
whole letter run, and a greeting of two words has them next to each other, so a few
``str.find`` calls stand in for a pass of a trie over every word.
"""

from __future__ import annotations

import re
from functools import lru_cache

from .detectors_gates import letter_runs
from .names_words import COMMON, FIRST

# The words of each greeting and intro in ``_cue_re`` ("c o" of "c/o", "it s" of "it's").
_CUES = tuple(
    frozenset(cue.encode().split())
    for cue in "hi|hello|hey|dear|thanks|thx|cheers|greetings|bonjour|hallo|hola|ciao|salut|"
    "signed|attn|im|its|thank you|good morning|good afternoon|good evening|name is|c o|this is|"
    "i am|i m|it s|ask for|speak to".split("|")
)
# What ``_cue_re`` needs of a cue of several words: the words in order, with only
# whitespace between them (``\s+`` there), or the one character that joins them.
_CUE_ORDER = {
    frozenset(cue.split()): re.compile(pattern)
    for cue, pattern in (
        (b"thank you", r"thank\s+you"),
        (b"good morning", r"good\s+morning"),
        (b"good afternoon", r"good\s+afternoon"),
        (b"good evening", r"good\s+evening"),
        (b"name is", r"name\s+is"),
        (b"c o", r"c/o"),
        (b"this is", r"this\s+is"),
        (b"i am", r"i\s+am"),
        (b"i m", r"i'm"),
        (b"it s", r"it's"),
        (b"ask for", r"ask\s+for"),
        (b"speak to", r"speak\s+to"),
    )
}


# The longest word of each: a text without any of them holds no cue.
_CUE_KEYS = frozenset(max(sorted(cue), key=len) for cue in _CUES)


def no_cue(low: str) -> bool:
    """No greeting or intro has all its words in the (ASCII) text, in their order."""
    words = letter_runs(low)
    if words is None:
        return False
    if words.isdisjoint(_CUE_KEYS):
        return True
    for cue in _CUES:
        if cue <= words:
            order = _CUE_ORDER.get(cue)
            if order is None or order.search(low) is not None:
                return False
    return True


@lru_cache(maxsize=1)
def _ascii_names() -> frozenset[bytes]:
    """The known first names an ASCII text can hold as one letter run. "anne-marie" is the
    one name of several runs, and its first, "anne", is a name too."""
    names = frozenset(FIRST.split()) | frozenset(COMMON.split())
    compound = {n for n in names if n.isascii() and not n.isalpha()}
    if any(n.split("-", 1)[0] not in names or not n.split("-", 1)[0].isalpha() for n in compound):
        raise RuntimeError("a compound first name whose first part is not a name")
    return frozenset(n.encode() for n in names if n.isascii() and n.isalpha())


# What may stand before a first name in ``names._first_name_re``.
_BEFORE_NAME = frozenset(" \n\t\"'([{,;>*")


def first_name_starts(low: str, pattern: re.Pattern[str]) -> tuple[int, ...]:
    """Where ``pattern`` (``names._first_name_re``, run on ``" " + low``) matches a first
    name in the lower-cased ``low``, in order."""
    starts = _ascii_name_starts(low)
    if starts is None:
        return tuple(hit.start(1) - 1 for hit in pattern.finditer(" " + low))
    return starts


@lru_cache(maxsize=16)
def _ascii_name_starts(low: str) -> tuple[int, ...] | None:
    """``first_name_starts`` of an ASCII text; None for any other.

    On ASCII text the pattern's name is a whole letter run (one of the separators before
    it, a non-letter after), so each known name among the runs is found with ``find``
    instead; no match of the pattern overlaps another, as no name holds a separator.
    Cached: ``names._inverted`` asks for the same text after ``names._after_first_name``.
    """
    words = letter_runs(low)
    if words is None:
        return None
    starts: list[int] = []
    size = len(low)
    for run in words & _ascii_names():
        name = run.decode()
        at = low.find(name)
        while at >= 0:
            end = at + len(name)
            if (not at or low[at - 1] in _BEFORE_NAME) and (end == size or not low[end].isalpha()):
                starts.append(at)
            at = low.find(name, end)
    starts.sort()
    return tuple(starts)


def comma_names(low: str, pattern: re.Pattern[str]) -> list[tuple[int, int]]:
    """Where ``pattern`` (``names._comma_first_re``: a comma, spaces or tabs and a first
    name) matches in ``low``: the comma's offset and the name's. On ASCII text, the first
    names ``first_name_starts`` finds that have those before them.
    """
    starts = _ascii_name_starts(low)
    if starts is None:
        return [(match.start(), match.start(1)) for match in pattern.finditer(low)]
    found = []
    for start in starts:
        comma = start
        while comma and low[comma - 1] in " \t":
            comma -= 1
        if comma < start and comma and low[comma - 1] == ",":
            found.append((comma - 1, start))
    return found


_TITLES = frozenset(
    b"dr mr mrs ms mx miss prof sir dame herr frau mme mlle sr sra dott sig ing mevr rev".split()
)


def no_title(low: str) -> bool:
    """No title ("Dr", "Ms") is a letter run of the (ASCII) text: ``names._titled`` keeps a
    title only where it starts a word, and the pattern needs a full stop or space after."""
    words = letter_runs(low)
    return words is not None and words.isdisjoint(_TITLES)


# How far before its ":" or "=" (and the spaces before that) a key cue may start: the
# longest cue, twelve more key characters and a quote.
_KEY_BACK = len("recipient") + 12 + 1
# Beyond this many ":" and "=", one pass of the pattern is cheaper than a look at each.
_KEY_MARKS = 8


def key_absent(low: str, gate: re.Pattern[str]) -> bool:
    """``gate`` (a key cue, key characters, a quote, spaces, then ":" or "=") matches
    nowhere in ``low``: looked for just before each ":" and "=", where a match ends."""
    marks = low.count(":") + low.count("=")
    if not marks:
        return True
    if marks > _KEY_MARKS:
        return gate.search(low) is None
    for mark in ":=":
        at = low.find(mark)
        while at >= 0:
            start = at
            while start and low[start - 1].isspace():
                start -= 1
            if gate.search(low, max(0, start - _KEY_BACK), at + 1) is not None:
                return False
            at = low.find(mark, at + 1)
    return True
