"""Street ADDRESSES: a small grammar of regular expressions, one per address style.

- US / English: house number, street words, a suffix (``St``, ``Ave``, ``Rd``, ``Blvd``,
  ``Ln``, ``Dr``, ``Ct``, ``Way`` ...), an optional unit (``Apt 4B``, ``Suite 200``,
  ``#12``), then optionally city, state code and ZIP / ZIP+4.
- UK: house number or house name (``Rose Cottage``), street, town and a postcode
  (``SW1A 1AA``); a street without a number is taken only before a postcode.
- France ``12 rue de la Paix, 75002 Paris``; Germany ``Hauptstraße 5, 10115 Berlin``
  (``Str.``, ``-weg``, ``-platz``); Spain ``Calle Mayor 10, 28013 Madrid`` (``C/``,
  ``Avda.``); Italy ``Via Roma 15, 00184 Roma``; Netherlands ``Damrak 1, 1012 LG
  Amsterdam`` (``-straat``, ``-laan``, ``-gracht``, ``-weg``; a bare street name only
  before a Dutch postcode).

All patterns match lower-case and abbreviated forms. A street name with no house
number ("the Washington Street store", "Main Street branch") is not an address; a
number after "order", "version", "#" ... is an identifier, not a house number
(``detectors_common.preceded_by_identifier_word``). The pseudonym is keyed on the
case-folded span with runs of spaces and commas collapsed.
"""

from __future__ import annotations

import re

from .addresses_words import SKIP_WORDS as _SKIP_WORDS
from .addresses_words import STATES as _STATES
from .addresses_words import US_SUFFIX_WORDS as _US_SUFFIX_WORDS
from .detectors_common import Found, alternation, bounded, lowered, preceded_by_identifier_word
from .detectors_gates import uk_postcode, word_before_number, words_or_shape

KIND = "ADDRESS"

# Word lists become tries (``alternation``): ``re`` tries a flat alternation's branches
# one by one at every word of every candidate.
_US_SUFFIX = alternation(_US_SUFFIX_WORDS)
_NOT_SKIP = r"\b(?!" + alternation(_SKIP_WORDS) + r"\b)"
# A street-name word: letters (any script) or an ordinal such as 5th / 42nd.
_NAME_WORD = rf"(?:{_NOT_SKIP}[^\W\d_][\w'’.-]{{0,24}}|\d{{1,3}}(?:st|nd|rd|th))"
_CAP = rf"{_NOT_SKIP}[^\W\d_][\w'’.-]{{0,24}}"
_JOINERS = r"(?:and|or|oder|und|of|et|ou|y|o|e|en|to|for|by|the|please|thanks|today|tomorrow)"
_UPPER = r"(?-i:[^\W\d_a-zäöüßàâçéèêëîïôûùÿñ])[\w'’.-]{0,24}"
_TOWN = rf"{_CAP}(?:[ \t]+(?!{_JOINERS}\b){_CAP}(?![\w'’.-]*[ \t]+\d)){{0,2}}"
_UNIT = (
    r"(?:,?[ \t]*(?:apt|apartment|suite|ste|unit|flat|fl|floor|rm|room|bldg|building|#)"
    r"\.?[ \t]*#?[ \t]*[0-9A-Za-z][0-9A-Za-z-]{0,5}\b)"
)
# "(?<!\d\d)" after the first digit: a number starts only where a run of digits does,
# so "re" makes one attempt per number, not one per digit (order ids, UUIDs ...).
_NUMBER = r"\d(?<!\d\d)\d{0,5}+[A-Za-z]?(?:[-/]\d{1,5}[A-Za-z]?)?"
_ZIP = r"\d{5}(?:-\d{4})?"
_UK_POSTCODE = r"[A-Za-z]{1,2}\d[A-Za-z\d]?[ \t]*\d[A-Za-z]{2}"
_NL_POSTCODE = r"\d{4}[ \t]?[A-Za-z]{2}"
_HOUSE_NAME = (
    rf"(?:{_CAP}[ \t]+){{1,2}}(?:house|cottage|farm|lodge|manor|hall|barn|villa|mill|"
    r"grange|court|mansions|buildings)"
)

# US / UK street with a house number: "1600 Pennsylvania Ave NW, Washington, DC 20500".
_STREET = re.compile(
    rf"(?i)(?P<num>{_NUMBER}),?[ \t]+"
    rf"(?:[NSEW]\.?[ \t]+|(?:north|south|east|west)[ \t]+)?"
    rf"(?:(?P<name>(?:{_NAME_WORD}[ \t]+){{1,4}}?)(?P<suffix>{_US_SUFFIX})|broadway)\b\.?"
    rf"(?:[ \t]+(?:[NS][EW]|[NSEW])\b\.?)?{_UNIT}?"
)
# The tail after a street: city, state and ZIP; town and UK postcode; or a town alone.
_US_TAIL = re.compile(
    rf"(?i),?[ \t]+(?:{_TOWN},?[ \t]+)?(?:(?-i:{_STATES})\b\.?(?:[ \t]+{_ZIP})?|"
    rf"(?:{_STATES})[ \t]+{_ZIP})"
)
_UK_TAIL = re.compile(rf"(?i)(?:,?[ \t]+{_TOWN}){{0,2}},?[ \t]+{_UK_POSTCODE}\b")
_EU_TAIL = re.compile(
    rf"(?i),?[ \t]+(?:[A-Z]-)?\d{{5}}[ \t]+{_TOWN}(?:[ \t]+(?-i:\(?[A-Z]{{2}}\)?)(?!\w))?"
)
_NL_TAIL = re.compile(rf"(?i),?[ \t]+{_NL_POSTCODE}[ \t]+{_TOWN}")
_TOWN_TAIL = re.compile(rf",[ \t]*(?P<town>{_TOWN})(?=[ \t]*(?:[.;!?)\n]|$))")
# UK street with no number, only before a postcode: "Mill Lane, Little Snoring, NR21 0AA".
_UK_NO_NUMBER = re.compile(
    rf"(?i)(?:(?:{_HOUSE_NAME}),?[ \t]+)?(?:{_NAME_WORD}[ \t]+){{1,3}}(?:{_US_SUFFIX})\b\.?"
    rf"(?:,?[ \t]+{_TOWN}){{0,2}},?[ \t]+{_UK_POSTCODE}\b"
)
# France: "12 rue de la Paix", "5 bis, avenue Foch", then "75002 Paris".
_FR = re.compile(
    rf"(?i)\d(?<!\d\d)\d{{0,3}}+(?:[ \t]*(?:bis|ter|[a-d]))?,?[ \t]+"
    r"(?:rue|avenue|av\.|bd\.?|boulevard|place|pl\.|chemin|ch\.|allée|impasse|imp\.|quai|cours|route|rte|square|passage|"
    rf"faubourg|fg|cité|voie)[ \t]+(?:{_NAME_WORD}[ \t]*){{1,5}}?(?={{eu}}|,|$|[.;\n])"
)
# Spain / Italy: the street type first, then the name, then the number.
_ES_IT_STARTS = tuple(
    "calle c/ avenida avda. avda av. plaza pza. paseo pº p° carrer camino ronda travesía "
    "glorieta via viale v.le piazza p.za p.zza piazzale corso c.so largo vicolo strada "
    "lungomare contrada".split()
)
_ES_IT_TYPES = alternation(_ES_IT_STARTS)
_ES_IT = re.compile(
    rf"(?i){_ES_IT_TYPES}[ \t]*(?:{_NAME_WORD}[ \t]+){{0,4}}?{_NAME_WORD},?[ \t]*"
    r"(?:n[º°.]?[ \t]*)?\d{1,4}[A-Za-z]?(?:/[A-Za-z0-9]{1,3})?"
    r"(?:,?[ \t]*\d{1,2}(?:[º°ª](?:[ \t]*(?:izq|izda|dcha|der|ctro|[A-Za-z])\b\.?)?|"
    r"[ \t]*(?:izq|izda|dcha|der|ctro)\b\.?))?"
)
# Germany / Netherlands / Austria / Switzerland: a suffixed street name, then the number.
# Suffixes that end English words too ("during 5", "iPad 10") need a postcode after.
_DE_NL_NUMBER = r",?[ \t]+\d{1,4}(?:[ \t]?[a-zA-Z]\b)?(?:-\d{1,4}(?:[a-zA-Z]\b)?)?"
_DE_NL_SUFFIXES = alternation(
    "straße strasse str. weg platz allee gasse chaussee straat laan gracht plein singel dijk "
    "dreef steeg burgwal plantsoen".split()
)
_DE_NL = re.compile(
    rf"(?i)(?:{_UPPER}[ \t-])?[^\W\d_][\w'’-]{{0,30}}?{_DE_NL_SUFFIXES}" + _DE_NL_NUMBER
)
_DE_NL_WEAK = re.compile(
    rf"(?i)(?:{_UPPER}[ \t-])?[^\W\d_][\w'’-]{{0,30}}?"
    + alternation("ring damm ufer steig pfad markt kade pad hof".split())
    + _DE_NL_NUMBER
    + r"(?=,?[ \t]+(?:\d{5}|\d{4}[ \t]?[A-Za-z]{2})[ \t]+[^\W\d_])"
)
# A German street written apart: "Unter den Linden 77", "Berliner Str. 12".
_DE_APART = re.compile(
    rf"(?i){_CAP}(?:[ \t]+{_CAP}){{0,2}}[ \t]+(?:straße|strasse|str\.|weg|platz|allee)"
    r"[ \t]+\d{1,4}[a-z]?"
)
# Any name and number, but only before a postcode and town: "Damrak 1, 1012 LG
# Amsterdam", "Unter den Linden 77, 10117 Berlin".
_NL_BARE = re.compile(
    rf"(?i){_CAP}(?:[ \t]+{_CAP}){{0,2}}[ \t]+\d{{1,4}}[a-zA-Z]?(?:-\d{{1,4}})?"
    rf"(?=,?[ \t]+(?:{_NL_POSTCODE}|\d{{5}})[ \t]+(?-i:[^\W\d_])[^\W\d_])"
)
_PO_BOX = re.compile(r"(?i)\bp\.?[ \t]?o\.?[ \t]*box[ \t]+\d{1,6}")
# What may come before a street: a unit, building or house name, then a comma.
_PREFIX = re.compile(
    rf"(?i)(?:(?:flat|apt|apartment|unit|suite|ste|bâtiment|bât\.|bat\.|bldg|building|"
    rf"escalier|floor)\.?[ \t]*[0-9A-Za-z]{{1,5}}|{_HOUSE_NAME}|the(?:[ \t]+{_CAP}){{1,3}})"
    r"[ \t]*,[ \t]*$|(?:flat|apt|apartment|unit|suite|ste|bldg|building)\.?[ \t]+$"
)
_FR_RE = re.compile(_FR.pattern.replace("{eu}", _EU_TAIL.pattern.removeprefix("(?i)")))


def _tail(text: str, end: int, tails: tuple[re.Pattern[str], ...]) -> int:
    """Extend ``end`` over the first tail (city, state, postcode) that follows it."""
    for tail in tails:
        match = tail.match(text, end)
        if match and bounded(text, match.start() + 1, match.end()):
            return match.end()
    return end


# Gates: cheap tests that a costlier pattern needs to pass, so that most texts (which
# hold no address at all) cost two scans of the lowered text (``lowered``, where ``re``
# runs case-sensitive patterns several times faster than (?i) ones) and no more.
_FR_STARTS = tuple(
    "rue avenue av. bd bd. boulevard place pl. chemin ch. allée impasse imp. quai cours route "
    "rte square passage faubourg fg cité voie".split()
)
_US_SET = frozenset(_US_SUFFIX_WORDS)
_FR_SET = frozenset(_FR_STARTS)
_ES_IT_SET = frozenset(_ES_IT_STARTS)
# After a space: a street word of any of the three sets (one trie, so one walk per
# space; the word's set is looked up after), or a house number, a postcode and a town.
_GATE = re.compile(
    f" (?:({alternation(_US_SET | _FR_SET | _ES_IT_SET)})|"
    r"\d{1,4}(?:[ \t]?[a-z])?(?:-\d{1,4}[a-z]?)?,?[ \t]+(?:\d{4}[ \t]?[a-z]{2}|\d{5})[ \t]+"
    r"[^\W\d_])"
)
# A German or Dutch street suffix, then a house number (``_de_nl``: the cheap test first).
_DE_NL_WORDS = (
    "straße strasse str. weg platz allee gasse chaussee straat laan gracht plein singel "
    "dijk dreef steeg burgwal plantsoen".split()
)
_DE_NL_GATE = re.compile(alternation(_DE_NL_WORDS) + r",?[ \t]+\d")
_de_nl = word_before_number(_DE_NL_WORDS)
# Gate words stand after a space; these characters may stand there too.
_AS_SPACE = ("\n", "\t", "(")
# A hit of ``_GATE`` leads to an address only from a street word that is a whole letter
# run or, with a dot or slash, written out (the patterns take it so), or from a four-digit
# number after a space.
_POSTCODE_SHAPE = re.compile(rb"0000(?<=[ \t\n(]0000)")
_street_gate = words_or_shape(_US_SET | _FR_SET | _ES_IT_SET, _POSTCODE_SHAPE)
_HAS_UK_POSTCODE = re.compile(rf"(?i)\b{_UK_POSTCODE}\b")
_HAS_DIGIT = re.compile(r"\d")
# The patterns run near gate hits, with how far before a hit their matches may start.
_NEAR_SUFFIX = ((_DE_NL, 72), (_DE_APART, 104))
_NEAR_POSTCODE = ((_DE_NL_WEAK, 72), (_NL_BARE, 96))


def _near(
    pattern: re.Pattern[str], text: str, hits: list[int], back: int, ahead: int | None = 48
) -> list[re.Match[str]]:
    """The matches of ``pattern`` in windows around ``hits``: each from a word start
    ``back`` characters before a hit to ``ahead`` after it (None: to the end of the
    text), so that a costly pattern scans only near its gate's hits."""
    found: list[re.Match[str]] = []
    done = 0
    for hit in hits:
        if hit < done:
            continue
        start = max(done, text.rfind(" ", 0, max(0, hit - back)) + 1)
        end = len(text) if ahead is None else min(len(text), hit + ahead)
        for match in pattern.finditer(text, start, end):
            if not found or match.start() >= found[-1].end():
                found.append(match)
        done = max(start, found[-1].end() if found else start)
    return found


def _needs_tail(pattern: re.Pattern[str], span: str) -> bool:
    """A street type that is also an English word ("via", "place") needs a postcode after."""
    if pattern is _ES_IT:
        return span[:1].islower() and bool(_ENGLISH_TYPE.match(span))
    if pattern is _FR_RE:
        return bool(_FR_ENGLISH.match(span)) and not _FR_PARTICLE.search(span)
    return False


_ENGLISH_TYPE = re.compile(r"(?i)(?:via|plaza|largo|corso|strada|ronda|camino)\b")
_FR_ENGLISH = re.compile(
    r"(?i)\d{1,4}(?:[ \t]*(?:bis|ter|[a-d]))?,?[ \t]+(?:place|pl\.|avenue|av\.|route|rte|"
    r"square|passage|cours|voie)\b"
)
_FR_PARTICLE = re.compile(r"(?i)\b(?:de|du|des|la|le|d'|l'|saint|sainte|st|ste)\b|[dl]'")


# "a 1904 Supreme Court ruling": courts of law, not streets.
_COURTS = frozenset(
    "supreme high crown district federal county appeals circuit magistrates family tax".split()
)


def _plausible_street(match: re.Match[str]) -> bool:
    words = [w.casefold().strip(".,") for w in (match.group("name") or "").split()]
    suffix = (match.group("suffix") or "").casefold()
    if suffix == "court" and words and words[-1] in _COURTS:
        return False
    return not any(w in _SKIP_WORDS for w in words)


class _Hits:
    """Where the gates fired in one text: the starts of candidate words and numbers."""

    def __init__(self, text: str) -> None:
        low = " " + lowered(text)  # the space lets a word at the start pass the gate
        self.us: list[int] = []
        self.fr: list[int] = []
        self.es: list[int] = []
        self.postcode: list[int] = []
        spaced = low if _street_gate(text) else ""  # "": the gate holds no hit
        for char in _AS_SPACE:
            if char in spaced:
                spaced = spaced.replace(char, " ")
        for hit in _GATE.finditer(spaced):
            start = hit.start()  # the word's start in ``text``
            word = hit.group(1)
            if word is None:
                self.postcode.append(start)
                continue
            # A word may be in two sets ("avenue", "plaza"); the trie took the longest.
            if word.rstrip(".") in _US_SET and not low[hit.end() : hit.end() + 1].isalpha():
                self.us.append(start)
            if word in _FR_SET:
                self.fr.append(start)
            if word in _ES_IT_SET:
                self.es.append(start)
        # Where a suffix ends, in ``text``.
        self.suffix = [hit.start() for hit in _DE_NL_GATE.finditer(low)] if _de_nl(low) else []
        self.box = "box" in low


def _street_spans(text: str, hits: _Hits) -> list[tuple[int, int]]:
    """US and UK streets (a suffix word after the name), PO boxes, and UK streets with
    no number before a postcode."""
    spans: list[tuple[int, int]] = []
    us_tails = (_US_TAIL, _UK_TAIL, _EU_TAIL, _TOWN_TAIL)
    for match in _STREET.finditer(text) if hits.us else ():
        start = match.start()
        if not bounded(text, start, match.end()) or text[match.end() : match.end() + 1] in (
            "-",
            "/",
        ):
            continue
        num_start = match.start("num")
        if preceded_by_identifier_word(text, num_start) or not _plausible_street(match):
            continue
        if text[max(0, start - 1) : start] in "$€£" and start:
            continue
        spans.append((start, _tail(text, match.end(), us_tails)))
    for match in _PO_BOX.finditer(text) if hits.box else ():
        spans.append((match.start(), _tail(text, match.end(), us_tails)))
    if hits.us and uk_postcode(text, _HAS_UK_POSTCODE):
        for match in _UK_NO_NUMBER.finditer(text):
            if bounded(text, match.start(), match.end()):
                words = match.group().split()
                if not any(w.casefold() in _SKIP_WORDS for w in words[:3]):
                    spans.append((match.start(), match.end()))
    return spans


def _european_matches(text: str, hits: _Hits) -> list[tuple[re.Pattern[str], re.Match[str]]]:
    """Candidate FR, ES, IT, DE and NL streets, each pattern run only near its gate's hits."""
    found = [(_FR_RE, m) for m in _FR_RE.finditer(text)] if hits.fr else []
    end = 0
    for start in hits.es:
        if start >= end and (not start or not text[start - 1].isalnum()):
            match = _ES_IT.match(text, start)
            if match:
                found.append((_ES_IT, match))
                end = match.end()
    for starts, near in ((hits.suffix, _NEAR_SUFFIX), (hits.postcode, _NEAR_POSTCODE)):
        if starts:
            for pattern, back in near:
                found += [(pattern, m) for m in _near(pattern, text, starts, back)]
    return found


def _spans(text: str) -> list[tuple[int, int]]:
    hits = _Hits(text)
    spans = _street_spans(text, hits)
    for pattern, match in _european_matches(text, hits):
        if not bounded(text, match.start(), match.end()):
            continue
        if preceded_by_identifier_word(text, match.start()):
            continue
        start = match.start()
        words = re.findall(r"(?<!\d)[^\W\d_]+", match.group().casefold())
        if words and words[0] in _SKIP_WORDS and pattern in (_DE_NL, _DE_NL_WEAK):
            start = match.start() + match.group().index(" ") + 1  # "an Goethestr. 21"
            words = words[1:]
        if any(w in _SKIP_WORDS for w in words):
            continue
        end = _tail(text, match.end(), (_EU_TAIL, _NL_TAIL))
        if end == match.end() and _needs_tail(pattern, match.group()):
            continue
        spans.append((start, end))
    return spans


def _widen(text: str, start: int, end: int) -> tuple[int, int]:
    """Take in a unit or house name before the street; drop a full stop after the town."""
    prefix = _PREFIX.search(text, max(0, start - 60), start)
    if prefix and not (prefix.start() and text[prefix.start() - 1].isalnum()):
        start = prefix.start()
    while end > start and text[end - 1] in ".,":
        last = text[start : end - 1].rsplit(None, 1)[-1]
        if text[end - 1] == "." and re.fullmatch(rf"(?i){_US_SUFFIX}|str|av|avda", last):
            break  # "Oak Ct.", "Goethestr."
        end -= 1
    return start, end


def _value(span: str) -> str:
    return re.sub(r"[\s,]+", " ", span.replace("’", "'")).strip(" .").casefold()


_COMPONENT = re.compile(r"[^,;\n]+")
_PART_WORD = re.compile(r"[\w'’.-]+")


def components(span: str) -> list[tuple[int, int, str]]:
    """The parts of an address, with their offsets in ``span`` and normalised values:
    the first part between commas whole ("12 Main St"), then each word of the rest
    ("Springfield", "IL", "62704"). Each gets its own pseudonym, so a town, state or
    postcode quoted alone elsewhere in the record keeps its token."""
    found: list[tuple[int, int, str]] = []
    for match in _COMPONENT.finditer(span):
        part = match.group()
        start = match.start() + len(part) - len(part.lstrip())
        end = match.end() - (len(part) - len(part.rstrip(" \t")))
        if end <= start or not any(c.isalnum() for c in span[start:end]):
            continue
        if not found:
            found.append((start, end, _value(span[start:end])))
            continue
        for word in _PART_WORD.finditer(span, start, end):
            if any(c.isalnum() for c in word.group()):
                found.append((word.start(), word.end(), _value(word.group())))
    return found


def standalone(part: str) -> bool:
    """Whether an address part after the street, seen alone elsewhere in the record, still
    belongs to the address: a town, state or postcode of two characters or more."""
    return len(part) > 1 and (part[0].isupper() or part.isdigit())


def detect(text: str) -> list[Found]:
    """ADDRESS spans in ``text``: overlapping candidates are merged into one span."""
    if not text or not _HAS_DIGIT.search(text):
        return []
    spans = sorted((_widen(text, s, e) for s, e in _spans(text)), key=lambda s: (s[0], -s[1]))
    merged: list[list[int]] = []
    for start, end in spans:
        if merged and start < merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    return [Found(s, e, KIND, _value(text[s:e])) for s, e in merged]


__all__ = ["KIND", "components", "detect", "standalone"]
