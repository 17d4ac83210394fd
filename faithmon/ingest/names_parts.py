"""The words of a PERSON span (``names``): how they are split and folded, which of them
identify the person, and which still do when they stand alone elsewhere in the record."""

from __future__ import annotations

import re

from .names_words import PARTICLES as _PARTICLES
from .names_words import STOP as _STOP

TITLE = r"(?:Dr|Mr|Mrs|Ms|Mx|Miss|Prof|Sir|Dame|Herr|Frau|Mme|Mlle|Sr|Sra|Dott|Sig|Ing|Mevr|Rev)"
WORD = r"[^\W\d_](?:[^\W\d_]|['’\-](?=[^\W\d_]))*\.?"
TOKEN = re.compile(WORD)
_TITLE_WORD = re.compile(rf"(?i){TITLE}\.?|med|phil|jur|rer|nat|h|c")


def fold(word: str) -> str:
    return word.rstrip(".").replace("’", "'").casefold()


def capitalised(word: str) -> bool:
    return word[0].isupper() and not (len(word) > 1 and word.rstrip(".").isupper())


def value(text: str) -> str:
    words = [fold(w) for w in TOKEN.findall(text)]
    while words and re.fullmatch(TITLE.lower(), words[0]):
        words = words[1:]
    return " ".join(words) or text.casefold()


def words(span: str) -> list[tuple[int, int, str]]:
    """The words of a name that identify someone, with their offsets in ``span`` and
    their folded form: not a title ("Dr."), not a particle between two words ("van der";
    first or last, "Ben Smith" or "Anna Le", it is a name)."""
    found = []
    tokens = [m for m in TOKEN.finditer(span) if not _TITLE_WORD.fullmatch(m.group())]
    for n, match in enumerate(tokens):
        word = match.group()
        folded = fold(word)
        if folded in _PARTICLES and 0 < n < len(tokens) - 1:
            continue
        end = match.end() - (1 if word.endswith(".") else 0)
        if folded.endswith("'s") and len(folded) > 3:  # "Farage's": the name is "Farage"
            end, folded = end - 2, folded[:-2]
        found.append((match.start(), end, folded))
    return found


def standalone(word: str) -> bool:
    """Whether a word of a name found in a record, seen alone elsewhere in that record,
    still names that person: "Smith", "Dean" or "Li" after "Heather Dean" or "Wei Li",
    as written there. Only a name written in lower case makes the lower-case word a name
    too, and never a function word or particle ("will smith": "I will" stays)."""
    folded = fold(word)
    if len(folded) < 2 or _TITLE_WORD.fullmatch(word):
        return False
    return capitalised(word) or (word.islower() and not (folded in _STOP or folded in _PARTICLES))
