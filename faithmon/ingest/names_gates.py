"""Gates in front of the costliest name patterns (``names``): the words a cue or a known
first name needs, tested against the letter runs of an ASCII text (``detectors_gates``)
so that a text holding none of them skips the pattern's pass over every word."""

from __future__ import annotations

from functools import lru_cache

from . import detectors_gates
from .detectors_gates import letter_runs
from .names_words import COMMON, FIRST

# The words of each greeting and intro in ``_cue_re`` ("c o" of "c/o", "it s" of "it's").
_CUES = tuple(
    frozenset(cue.encode().split())
    for cue in "hi|hello|hey|dear|thanks|thx|cheers|greetings|bonjour|hallo|hola|ciao|salut|"
    "signed|attn|im|its|thank you|good morning|good afternoon|good evening|name is|c o|this is|"
    "i am|i m|it s|ask for|speak to".split("|")
)


def absent(low: str, runs: frozenset[bytes]) -> bool:
    """None of ``runs`` is a word of the (ASCII) text: its trigger pattern cannot match."""
    words = letter_runs(low)
    return words is not None and words.isdisjoint(runs)


# The longest word of each: a text without any of them holds no cue.
_CUE_KEYS = frozenset(max(sorted(cue), key=len) for cue in _CUES)


def no_cue(low: str) -> bool:
    """No greeting or intro has all its words in the (ASCII) text."""
    words = letter_runs(low)
    if words is None:
        return False
    return words.isdisjoint(_CUE_KEYS) or not any(cue <= words for cue in _CUES)


@lru_cache(maxsize=1)
def first_runs() -> frozenset[bytes]:
    """The first letter run of every known first name (``names._lists``), built on first use."""
    return detectors_gates.first_runs(frozenset(FIRST.split()) | frozenset(COMMON.split()))
