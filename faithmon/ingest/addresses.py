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

from .detectors_common import Found, bounded, preceded_by_identifier_word

KIND = "ADDRESS"

_US_SUFFIX = (
    r"street|st|avenue|ave|av|road|rd|boulevard|blvd|lane|ln|drive|dr|court|ct|way|place|pl|"
    r"terrace|ter|circle|cir|parkway|pkwy|highway|hwy|square|sq|trail|trl|crescent|cres|"
    r"close|grove|gardens|gdns|mews|row|walk|alley|aly|loop|pike|plaza|plz|expressway|"
    r"expy|freeway|fwy|route|rte|broadway|causeway|crossing|xing|hollow|point|pt|ridge|"
    r"run|path|green|park|hill|vale|view|rise|wharf|quay|esplanade|embankment"
)
_STATES = (
    r"AL|AK|AZ|AR|CA|CO|CT|DE|DC|FL|GA|HI|ID|IL|IN|IA|KS|KY|LA|ME|MD|MA|MI|MN|MS|MO|MT|NE|"
    r"NV|NH|NJ|NM|NY|NC|ND|OH|OK|OR|PA|PR|RI|SC|SD|TN|TX|UT|VT|VA|WA|WV|WI|WY"
)
_SKIP_WORDS = frozenset(
    """
the a an at in on to of for from with by and or is are was were my your our their his
her its this that these those items item units unit pcs days day hours minutes years
weeks months times people users seats licenses copies orders tickets per each every
more than about only over under up down off out into next last first second min mins
sec secs hrs hr minute hour week month year ago times x code product sku model
""".split()
)
_NOT_SKIP = r"\b(?!(?:" + "|".join(sorted(_SKIP_WORDS)) + r")\b)"
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
_NUMBER = r"\d{1,6}[A-Za-z]?(?:[-/]\d{1,5}[A-Za-z]?)?"
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
    rf"(?i)\d{{1,4}}(?:[ \t]*(?:bis|ter|[a-d]))?,?[ \t]+(?:rue|avenue|av\.|bd\.?|boulevard|"
    r"place|pl\.|chemin|ch\.|allée|impasse|imp\.|quai|cours|route|rte|square|passage|"
    rf"faubourg|fg|cité|voie)[ \t]+(?:{_NAME_WORD}[ \t]*){{1,5}}?(?={{eu}}|,|$|[.;\n])"
)
# Spain / Italy: the street type first, then the name, then the number.
_ES_IT = re.compile(
    r"(?i)(?:calle|c/|avenida|avda\.?|av\.|plaza|pza\.|paseo|p[º°]|carrer|camino|ronda|"
    r"travesía|glorieta|via|viale|v\.le|piazza|p\.za|p\.zza|piazzale|corso|c\.so|largo|"
    r"vicolo|strada|"
    rf"lungomare|contrada)[ \t]*(?:{_NAME_WORD}[ \t]+){{0,4}}?{_NAME_WORD},?[ \t]*"
    r"(?:n[º°.]?[ \t]*)?\d{1,4}[A-Za-z]?(?:/[A-Za-z0-9]{1,3})?"
    r"(?:,?[ \t]*\d{1,2}(?:[º°ª](?:[ \t]*(?:izq|izda|dcha|der|ctro|[A-Za-z])\b\.?)?|"
    r"[ \t]*(?:izq|izda|dcha|der|ctro)\b\.?))?"
)
# Germany / Netherlands / Austria / Switzerland: a suffixed street name, then the number.
# Suffixes that end English words too ("during 5", "iPad 10") need a postcode after.
_DE_NL_NUMBER = r",?[ \t]+\d{1,4}(?:[ \t]?[a-zA-Z]\b)?(?:-\d{1,4}(?:[a-zA-Z]\b)?)?"
_DE_NL = re.compile(
    rf"(?i)(?:{_UPPER}[ \t-])?[^\W\d_][\w'’-]{{0,30}}?(?:straße|strasse|str\.|weg|platz|allee|"
    r"gasse|chaussee|straat|laan|gracht|plein|singel|dijk|dreef|steeg|burgwal|plantsoen)"
    + _DE_NL_NUMBER
)
_DE_NL_WEAK = re.compile(
    rf"(?i)(?:{_UPPER}[ \t-])?[^\W\d_][\w'’-]{{0,30}}?(?:ring|damm|ufer|steig|pfad|markt|kade|"
    r"pad|hof)" + _DE_NL_NUMBER + r"(?=,?[ \t]+(?:\d{5}|\d{4}[ \t]?[A-Za-z]{2})[ \t]+[^\W\d_])"
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


# Cheap searches that gate the costlier patterns (most texts hold no address at all).
_HAS_UK_POSTCODE = re.compile(rf"(?i)\b{_UK_POSTCODE}\b")
_HAS_POSTCODE = re.compile(r"(?i)\b(?:\d{5}|\d{4}[ \t]?[a-z]{2})[ \t]+[^\W\d_]")
_DE_NL_CUES = (
    "stra",
    "str.",
    "weg",
    "platz",
    "allee",
    "gasse",
    "chaussee",
    "laan",
    "gracht",
    "plein",
    "singel",
    "dijk",
    "dreef",
    "steeg",
    "burgwal",
    "plantsoen",
    "ring",
    "damm",
    "ufer",
    "steig",
    "pfad",
    "markt",
    "kade",
    "pad",
    "hof",
)
_ES_IT_CUES = (
    "calle",
    "c/",
    "av",
    "plaza",
    "pza",
    "paseo",
    "pº",
    "p°",
    "carrer",
    "camino",
    "ronda",
    "travesía",
    "glorieta",
    "via",
    "v.le",
    "piazz",
    "p.z",
    "corso",
    "c.so",
    "largo",
    "vicolo",
    "strada",
    "lungomare",
    "contrada",
)


class _Cue:
    """A cheap substring test on the case-folded text, in front of a costlier pattern."""

    def __init__(self, words: tuple[str, ...]) -> None:
        self.words = words

    def search(self, folded: str) -> bool:
        return any(word in folded for word in self.words)


_HAS_DE_NL = _Cue(_DE_NL_CUES)
_HAS_ES_IT = _Cue(_ES_IT_CUES)
_TIME = re.compile(r"(?i)\d{1,2}[ \t]*(?:a\.?m|p\.?m)\b")
_HAS_NUMBER = re.compile(r"\d")
_CUED = (
    (_FR_RE, _HAS_NUMBER),
    (_ES_IT, _HAS_ES_IT),
    (_DE_NL, _HAS_DE_NL),
    (_DE_NL_WEAK, _HAS_POSTCODE),
    (_DE_APART, _HAS_DE_NL),
    (_NL_BARE, _HAS_POSTCODE),
)


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


def _plausible_street(match: re.Match[str]) -> bool:
    words = (match.group("name") or "").split()
    return not any(w.casefold().strip(".,") in _SKIP_WORDS for w in words)


def _spans(text: str) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    us_tails = (_US_TAIL, _UK_TAIL, _EU_TAIL, _TOWN_TAIL)
    for match in _STREET.finditer(text):
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
    for match in _PO_BOX.finditer(text):
        spans.append((match.start(), _tail(text, match.end(), us_tails)))
    for match in _UK_NO_NUMBER.finditer(text) if _HAS_UK_POSTCODE.search(text) else ():
        if bounded(text, match.start(), match.end()):
            words = match.group().split()
            if not any(w.casefold() in _SKIP_WORDS for w in words[:3]):
                spans.append((match.start(), match.end()))
    folded = text.casefold()
    for pattern, cue in _CUED:
        if not cue.search(folded):
            continue
        for match in pattern.finditer(text):
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


def detect(text: str) -> list[Found]:
    """ADDRESS spans in ``text``: overlapping candidates are merged into one span."""
    if not text or not any(c.isdigit() for c in text):
        return []
    spans = sorted((_widen(text, s, e) for s, e in _spans(text)), key=lambda s: (s[0], -s[1]))
    merged: list[list[int]] = []
    for start, end in spans:
        if merged and start < merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    return [Found(s, e, KIND, _value(text[s:e])) for s, e in merged]


__all__ = ["KIND", "detect"]
