"""PERSON names without a model: a hand-kept first-name list plus context rules. A name is:

- a known first name, any case, then up to three capitalised surname tokens (``O'Neill``,
  ``Álvarez``, ``van der Berg``) or a known lower-case surname (``hi its john smith``);
  a capitalised first name that is not also a common word stands alone too;
- a title (``Dr.``, ``Ms``, ``Prof.``) then capitalised words; ``Kowalski, Anna``;
- the word after a greeting (``hi``, ``dear``, ``thanks``) or the line after a sign-off;
- the next member of a list (``Priya Shah and Tom Weber``) whose first member is a name;
- a JSON or ``key=value`` field whose key names a person (``"customer_name": "..."``).

First names that are also common words (``will``, ``may``) need a surname after them or a
greeting before them; a name before a street or business word (``Victoria Street``) is a
place, unless that word is also a surname (``Hall``, ``Lane``, ``Park``; ``May`` at the end
of a clause) that ends the phrase and a title, greeting, name field or first name that is
not a place's comes first ("Andrew Hall", not "the Albert Hall" or "Jordan Park"); a word
touching ``@ . / _`` is part of an e-mail address, URL or identifier. The pseudonym's value
drops the title and folds case: "Dr. Priya Shah" ~ "priya shah".

A hand-kept list, not a package: ``gender-guesser`` (61k names, 6-22 MB) is GPLv3/GFDL and
full of common words; ``names-dataset`` is a 56 MB wheel needing 3.2 GB of memory.
"""

from __future__ import annotations

import re
from functools import lru_cache

from .detectors_common import Found, alternation, lowered
from .names_gates import comma_names as _comma_names
from .names_gates import first_name_starts as _first_name_starts
from .names_gates import key_absent as _key_absent
from .names_gates import no_cue as _no_cue
from .names_gates import no_title as _no_title
from .names_parts import TITLE as _TITLE
from .names_parts import TOKEN as _TOKEN
from .names_parts import WORD as _WORD
from .names_parts import capitalised as _capitalised
from .names_parts import fold as _fold
from .names_parts import standalone, words
from .names_parts import value as _value
from .names_words import COMMON as _COMMON
from .names_words import FIRST as _FIRST
from .names_words import ORG_AFTER as _ORG_AFTER
from .names_words import PARTICLES as _PARTICLES
from .names_words import PLACE_SURNAMES as _PLACE_SURNAMES
from .names_words import PLACE_WORDS as _PLACE_WORDS
from .names_words import STOP as _STOP
from .names_words import STOP_SURNAMES as _STOP_SURNAMES
from .names_words import SURNAMES as _SURNAMES
from .names_words import WORDLIKE_SURNAMES as _WORDLIKE_SURNAMES

KIND = "PERSON"

# Triggers start without "\b" (which stops ``re`` skipping ahead to their first letters):
# ``_starts_word`` checks the boundary instead.
_TITLE_RE = re.compile(rf"{_TITLE}\.?\s+(?:(?:med|phil|jur|rer\.\s?nat|h\.\s?c)\.\s+)?(?=[^\W\d_])")
# The surname before "Kowalski, Anna" (the first name found by ``_comma_first_re``).
_BEFORE_COMMA = re.compile(r"[^\W\d_][\w'’-]{1,30}$")
# Greetings and intros run on the lowered text (``lowered``), so they need no (?i).
_GREETING = (
    r"(?:hi|hello|hey|dear|thanks|thank\s+you|thx|cheers|greetings|good\s+(?:morning|"
    r"afternoon|evening)|bonjour|hallo|hola|ciao|salut|my\s+name\s+is|name\s+is|signed|"
    r"attn|c/o)[ \t]*[,:!]?[ \t]+(?:it's[ \t]+|its[ \t]+|this[ \t]+is[ \t]+|me,?[ \t]+)?"
)
_CLAUSE_END = re.compile(r"[ \t]*(?:[,.!?;)\n\r\"']|$)")
# Weaker cues: only a known first name after them.
_INTRO = r"(?:this\s+is|i\s+am|i'm|im|it's|its|ask\s+for|speak\s+to)\s+"
_SIGNOFF = re.compile(
    r"(?im)^[ \t]*(?:(?:kind|best|warm|many)\s+(?:regards|wishes|thanks)|regards|best|cheers|"
    r"thanks|thank\s+you|sincerely|yours(?:\s+(?:truly|sincerely))?|br|cordialement|"
    r"saludos|grüße|mit\s+freundlichen\s+grüßen|groeten|a\s+presto)[ \t]*[,!.]?[ \t]*\r?\n[ \t]*"
)
_KEY_CUES = "name user agent contact customer assignee requester recipient sender owner".split()
_KEYED = re.compile(
    rf"""(?i)["']?\b([\w.-]{{0,24}}(?:{"|".join(_KEY_CUES)})[\w.-]{{0,12}})["']?"""
    r"""\s*[:=]\s*(?:"([^"\\\n]{1,80})"|'([^'\\\n]{1,80})'|([^\W\d_][^,;\n"'}\]&|<>]{0,60}))"""
)
# The cheap test in front of ``_KEYED``: a key cue, then ":" or "=" (on lowered text).
_KEY_GATE = re.compile(rf"""{alternation(_KEY_CUES)}[\w.-]{{0,12}}["']?\s*[:=]""")
_NOT_PERSON_KEY = re.compile(
    r"(?i)product|file|compan|org|store|branch|host|service|model|tool|event|span|app|plan|street|"
    r"city|field|table|queue|key|tag|type|kind|status|route|tenant|region|country|item|sku|brand|"
    r"team|group|role|domain|class|func|module|metric|attr|label|env|db|node|project|repo|server|"
    r"device|browser|version|id$|_id|user_agent|useragent|auth|token|secret|passw|cookie|session"
)
_NEXT_WORD = re.compile(rf"[ \t]+({_WORD})")
# "the Albert Hall", "the Kate Park store": a first name after "the" is a place's.
_THE_BEFORE = re.compile(r"\b[Tt]he[ \t]+$")
_LIST_JOIN = re.compile(r"(?:\s*,\s*(?:and\s+|or\s+)?|\s+(?:and|or|&|und|et|y|e|en)\s+)")
# A capitalised word just before a first name that makes it a place.
_PLACE_BEFORE = re.compile(
    r"(?:\b(?:Santa|San|Saint|Sainte|St\.?|Ste\.?|Fort|Ft\.?|Port|Mount|Mt\.?|Lake|Los|Las|"
    r"New|Cape|Glen)|\bLa)[ \t]+$"
)


@lru_cache(maxsize=1)
def _lists() -> tuple[frozenset[str], frozenset[str], frozenset[str]]:
    """The first-name, common-word-name and surname sets, built once on first use."""
    common = frozenset(_COMMON.split())
    return frozenset(_FIRST.split()) | common, common, frozenset(_SURNAMES.split())


def _known_first(folded: str) -> bool:
    """A known first name, or a hyphenated one whose first part is ("hans-jürgen")."""
    first = _lists()[0]
    return folded in first or ("-" in folded and folded.split("-", 1)[0] in first)


def _surname_like(folded: str) -> bool:
    """A lower-case word that can only be a surname: known, or O'/Mc/D' prefixed."""
    known = folded in _lists()[2] or bool(re.match(r"(?:o'|d'|mc)[^\W\d_]{2}", folded))
    return known and folded not in _WORDLIKE_SURNAMES


def _touches_identifier(text: str, start: int, end: int) -> bool:
    """The word is part of an e-mail address, URL, path, handle or identifier."""
    if text[end - 1] == ".":
        end -= 1
    before = text[start - 1] if start else " "
    after = text[end : end + 2]
    if before.isalnum() or before in "@./_\\:#<-+%&":
        return True
    return bool(after) and (
        after[0] in "@_/\\<>" or after[0].isalnum() or (after[0] in ".-" and after[1:].isalnum())
    )


def _last_surname(text: str, end: int, folded: str) -> bool:
    """A place or everyday word ending at ``end`` ends a name, not starts a place: a
    surname such as "Hall", then no more place or business words ("Hall Museum")."""
    if folded in _STOP_SURNAMES:
        return _CLAUSE_END.match(text, end) is not None
    if folded not in _PLACE_SURNAMES:
        return False
    after = _NEXT_WORD.match(text, end)
    if after is None:
        return True
    word = after.group(1)
    return not (_capitalised(word) or _fold(word) in _PLACE_WORDS or _fold(word) in _ORG_AFTER)


def _surnames(
    text: str, pos: int, lower_ok: bool, limit: int = 3, places: bool = False
) -> tuple[int, bool] | None:
    """The end of the surname tokens starting at ``pos``; None if a place word follows.

    The flag says whether a surname was found at all. ``lower_ok``: a lower-case known
    surname counts (the first name was in lower case too). ``places``: after a strong cue,
    a place or everyday word that is also a surname can end the name ("Andrew Hall").
    """
    end, found, taken = pos, False, 0
    cursor = tail = pos
    while taken < limit:
        gap = re.match(r"[ \t]{1,3}", text[cursor:])
        if not gap:
            break
        match = _TOKEN.match(text, cursor + gap.end())
        if not match or _touches_identifier(text, match.start(), match.end()):
            break
        word = match.group()
        folded = _fold(word)
        if folded in _PARTICLES and taken < limit - 1:
            cursor = match.end()
            # A capitalised particle with no name after it is the surname ("Anna Le").
            tail = match.end() - word.endswith(".") if _capitalised(word) else tail
            continue
        if _capitalised(word) and (folded in _PLACE_WORDS or folded in _STOP_SURNAMES):
            word_end = match.end() - word.endswith(".")
            if places and _last_surname(text, word_end, folded):
                return word_end, True
            if folded in _PLACE_WORDS:
                return None
        if folded in _STOP:
            break
        if not (_capitalised(word) or (lower_ok and _surname_like(folded))):
            break
        end = match.end() - (1 if word.endswith(".") else 0)
        found, taken, cursor = True, taken + 1, match.end()
        if word.endswith(".") and len(word) > 2:  # "Dean. Where": the sentence ends, not "J."
            break
    return (tail, True) if tail > end else (end, found)


def _starts_word(text: str, start: int) -> bool:
    return not start or not (text[start - 1].isalnum() or text[start - 1] in "_'’")


@lru_cache(maxsize=1)
def _first_name_re() -> re.Pattern[str]:
    """Known first names (and their hyphenated first parts), as a trie, on lowered text.

    The separator before the name is part of the match (the text gets a space in front):
    starting with a small character class lets ``re`` skip to the next separator instead
    of entering the trie at every letter. Other characters before a name (``@ . : -``)
    make it part of an identifier anyway (``_touches_identifier``).
    """
    return re.compile(f"[ \\n\\t\"'(\\[{{,;>*]({alternation(sorted(_lists()[0]))})(?![^\\W\\d_])")


@lru_cache(maxsize=1)
def _cue_re() -> re.Pattern[str]:
    """A greeting, or an intro ("this is", "i'm") before a known first name, on the
    lowered text with a space in front; the character before the cue is in the match."""
    first = alternation(sorted(_lists()[0]))
    return re.compile(
        f"[ \\n\\t\"'(>*](?:(?P<greeting>{_GREETING})|{_INTRO}(?=(?:{first})(?![^\\W\\d_])))"
    )


@lru_cache(maxsize=1)
def _comma_first_re() -> re.Pattern[str]:
    """A comma and a known first name, as in "Kowalski, Anna", on lowered text."""
    return re.compile(f",[ \\t]+((?:{alternation(sorted(_lists()[0]))}))(?![^\\W\\d_])")


def _after_first_name(text: str, low: str) -> list[tuple[int, int]]:
    common = _lists()[1]
    spans = []
    for start in _first_name_starts(low, _first_name_re()):
        match = _TOKEN.match(text, start)
        if match is None:
            continue
        word = match.group().rstrip(".")
        folded = _fold(word)
        if not _known_first(folded) or _touches_identifier(text, match.start(), match.end()):
            continue
        start, word_end = match.start(), match.start() + len(word)
        after = _TOKEN.match(text, word_end + 1)
        lower_next = after is not None and _surname_like(_fold(after.group()))
        if not (lower_next or _capitalised(word)):
            continue  # a name in lower case only before a lower-case surname ("john smith")
        if _PLACE_BEFORE.search(text, max(0, start - 8), start):
            continue  # "Santa Barbara", "San Jose", "St. Helena", "Port Elizabeth"
        places = folded not in common and not _THE_BEFORE.search(text, max(0, start - 5), start)
        rest = _surnames(text, word_end, lower_ok=True, places=places)
        if rest is None:
            continue
        end, has_surname = rest
        if has_surname and (_capitalised(word) or lower_next):
            spans.append((start, end))
        elif not has_surname and _capitalised(word) and folded not in common:
            spans.append((start, word_end))
    return spans


def _name_at(
    text: str, pos: int, known_only: bool = False, keyed: bool = False, weak: bool = False
) -> tuple[int, int] | None:
    """A name starting at ``pos``: a capitalised word, or a known first name in lower case.

    ``weak``: the cue before it is an intro ("this is") or a bare ``name`` key, so a first
    name that is also a place's ("Jordan Park") takes no place word as its surname."""
    match = _TOKEN.match(text, pos)
    if not match or _touches_identifier(text, match.start(), match.end()):
        return None
    word = match.group().rstrip(".")
    folded = _fold(word)
    known = _known_first(folded)
    if folded in _STOP and not known:
        return None
    if not (known or (_capitalised(word) and len(word) > 1 and not known_only)):
        return None
    end = match.start() + len(word)
    places = folded not in _PLACE_WORDS and not (weak and folded in _lists()[1])
    rest = _surnames(text, end, lower_ok=True, places=places)
    if rest is None:
        return None
    after = _TOKEN.match(text, rest[0] + 1)
    if after and _fold(after.group()) in _ORG_AFTER:
        return None
    # An unknown word must end its clause ("Hi Xiomara,"), not start one ("Hi, Commit 99").
    if not (known or keyed or _CLAUSE_END.match(text, rest[0])):
        return None
    return match.start(), max(rest[0], end)


def _titled(text: str, low: str) -> list[tuple[int, int]]:
    spans = []
    for match in () if _no_title(low) else _TITLE_RE.finditer(text):
        if not _starts_word(text, match.start()) or not text[match.end()].isupper():
            continue
        rest = _surnames(text, match.end() - 1, lower_ok=False, places=True)
        if rest and rest[1]:
            spans.append((match.start(), rest[0]))
    return spans


def _greeted(text: str, low: str) -> list[tuple[int, int]]:
    spans = []
    for match in () if _no_cue(low) else _cue_re().finditer(" " + low):
        intro = match.group("greeting") is None
        span = _name_at(text, match.end() - 1, known_only=intro, weak=intro)
        if span:
            spans.append(span)
    for match in _SIGNOFF.finditer(text) if "\n" in text else ():
        span = _name_at(text, match.end())
        if span:
            spans.append(span)
    return spans


def _keyed(text: str, low: str) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    if _key_absent(low, _KEY_GATE):
        return spans
    for match in _KEYED.finditer(text):
        if _NOT_PERSON_KEY.search(match.group(1)):
            continue
        group = next(g for g in (2, 3, 4) if match.group(g) is not None)
        bare = match.group(1).lower() == "name"  # "name": "Victoria Park" may be a place
        if group == 4:
            span = _name_at(text, match.start(4), keyed=True, weak=bare)
            if span:
                spans.append(span)
            continue
        value = match.group(group)
        start, end = match.start(group), match.end(group)
        stripped = value.strip(" .")
        start += len(value) - len(value.lstrip(" "))
        end -= len(value) - len(value.rstrip(" ."))
        words = [_fold(w) for w in _TOKEN.findall(stripped)]
        if not words or any(c.isdigit() or c in "@/\\{}[]<>=_" for c in stripped):
            continue
        if not (stripped[0].isupper() or words[0] in _lists()[0]):
            continue
        # A place or everyday word may be the surname ("Andrew Hall"), never a first word
        # or a middle one ("Washington Street store").
        last = stripped.split()[-1]
        if len(words) > 1 and _capitalised(last) and _last_surname(last, len(last), words[-1]):
            words = words if bare and words[0] in _lists()[1] else words[:-1]
        if len(words) <= 5 and not any(w in _PLACE_WORDS or w in _STOP for w in words):
            spans.append((start, end))
    return spans


def _inverted(text: str, low: str) -> list[tuple[int, int]]:
    spans = []
    for comma, name in _comma_names(low, _comma_first_re()):
        surname = _BEFORE_COMMA.search(text, max(0, comma - 31), comma)
        first = _TOKEN.match(text, name)
        if surname is None or first is None or not _starts_word(text, surname.start()):
            continue
        if not surname.group()[0].isupper():
            continue
        if _fold(surname.group()) in _lists()[2] and _known_first(_fold(first.group())):
            spans.append((surname.start(), first.end() - first.group().endswith(".")))
    return spans


def _listed(text: str, spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Capitalised names joined by "and" or a comma to a name already found."""
    more = []
    for _, end in spans:
        cursor = end
        while True:
            join = _LIST_JOIN.match(text, cursor)
            if not join:
                break
            match = _TOKEN.match(text, join.end())
            if not match or not _capitalised(match.group()) or _fold(match.group()) in _STOP:
                break
            rest = _surnames(text, match.end(), lower_ok=False)
            if rest is None or not rest[1]:
                break
            more.append((match.start(), rest[0]))
            cursor = rest[0]
    return more


def detect(text: str) -> list[Found]:
    """PERSON spans in ``text``, non-overlapping, each keyed on its case-folded name."""
    if not text:
        return []
    low = lowered(text)
    spans = _titled(text, low) + _greeted(text, low) + _after_first_name(text, low)
    spans += _keyed(text, low)
    spans += _inverted(text, low)
    spans += _listed(text, spans)
    spans.sort(key=lambda s: (s[0], -s[1]))
    found: list[Found] = []
    cursor = 0
    for start, end in spans:
        if end <= start:
            continue
        if start < cursor:
            if end > cursor and found:  # overlapping candidates: take their union
                last = found[-1]
                found[-1] = Found(last.start, end, KIND, _value(text[last.start : end]))
                cursor = end
            continue
        found.append(Found(start, end, KIND, _value(text[start:end])))
        cursor = end
    return found


__all__ = ["KIND", "detect", "standalone", "words"]
