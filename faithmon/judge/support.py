"""Lexical support of a claim by its context: soft word matching, numbers, entities.

``Evidence(chunks)`` indexes the context once: the stems of every content
word (camelCase keys split, so ``"OutdoorSeating"`` gives "outdoor" and "seating"), the
canonical numbers (digits and number words) and each chunk's sentences.
``Evidence.check(claim)`` then says which of the claim's content words, numbers and
names are found anywhere in the context (a paraphrase spreads its words over several
sentences), and which chunk sentence is the best quote for it.
"""

from __future__ import annotations

import functools
import itertools
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

from . import numbers as num
from . import text as t

_QUOTES = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"'})
_CAMEL = re.compile(r"(?<=[a-z])(?=[A-Z][a-z])")
# A scrubbed value's hash ("<PHONE_99cde984>", ingest's pseudonyms) is read whole, as one
# identifier: its leading digits are no number a claim could borrow ("99.00 euros").
_PSEUDONYM_HASH = re.compile(r"(?<=[A-Z]_)(?=[0-9a-f]{8}>)")
_TOKEN = re.compile(
    r"(?P<code>[A-Za-z]+\d[A-Za-z0-9]*)|(?P<num>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)(?:st|nd|rd|th)?"
    r"|(?P<abbr>(?:[A-Z]\.){2,})|(?P<word>[A-Za-z]+(?:-[A-Za-z]+)*)"
)
# Words that carry no checkable content of their own: units that a number already
# pins down, currency names, and the words answers use to talk about their sources.
UNIT_WORDS = frozenset(
    """percent per cent dollar dollars usd eur euro euros pound pounds
    according based provided given passage passages context article text information
    summary overview data structured source sources mention mentions mentioned state states
    stated note notes noted objective json""".split()
)
# Connectives, hedges and generic verbs, adjectives and nouns that paraphrases and
# summaries add freely: their absence from the context says little.
GENERIC_WORDS = frozenset(
    """however overall while whilst despite although though additionally addition further
    furthermore moreover therefore thus hence meanwhile instead otherwise rather still yet
    even well both either neither another other others various several many much few
    lot lots number numerous multiple particular particularly specific specifically certain
    general generally total example instance include includes including included
    offer offers offered offering provide provides providing available availability option
    options variety range feature features featuring known describe described describes
    appear appears appeared seem seems seemed make makes made making use uses used using
    find finds found consider considered considering regard regarding regarded term terms
    like due during through throughout after before until since upon within without along
    among across toward towards around every one ones ever never always often usually
    typically sometimes also again already now currently recently soon later first second
    finally lastly main mainly important importantly key significant significantly
    potential potentially possible possibly likely unlikely able unable answer question
    word words step steps ensure sure need needs needed help helps way ways thing things
    kind type types aspect aspects part parts whole set get gets got come comes came
    take takes took give gives gave show shows showed shown place places high highly
    located location situated area receive receives received receiving look looks looked
    looking""".split()
)
# Words of opinion and of how something was received: an answer that sums up reviews,
# reports or reactions uses its own ("praised", "popular", "mixed"), so their absence
# from the context says little; the facts they are said of are still checked.
OPINION_WORDS = frozenset(
    """patron patrons visitor visitors diner diners reviewer reviewers review reviews reviewed
    praise praised praises praising rave raved raves rate rated rating ratings
    popular popularity favorite favourite quality experience experiences
    positive positively negative negatively mixed overall average decent solid
    great good excellent outstanding exceptional fantastic amazing wonderful awesome superb
    nice pleasant enjoyable enjoy enjoyed enjoying appreciate appreciated appreciates
    recommend recommended recommends recommendation highly
    satisfied satisfaction satisfying dissatisfied dissatisfaction disappointed
    disappointing disappointment complain complained complaint complaints
    criticism criticized criticised critical concern concerns concerned issue issues
    problem problems feedback impression impressions opinion opinions sentiment
    expressed expresses expressing noting comment comments commented commenting
    highlight highlighted highlights highlighting report reported reports reporting
    experienced spot establishment eatery venue destination choice
    ideal perfect suitable worth worthwhile unique notable standout reputation""".split()
)
# Who writes reviews: an answer says "customers praised" where the context holds reviews.
REVIEWERS = frozenset("customer client guest diner patron visitor user people".split())
_STOP = (
    t.STOPWORDS
    | t.NEGATIONS
    | UNIT_WORDS
    | GENERIC_WORDS
    | OPINION_WORDS
    | frozenset("""not n't s t re ve ll d m am pm""".split())
)
US_STATES = {
    "AL": "alabama", "AK": "alaska", "AZ": "arizona", "AR": "arkansas", "CA": "california",
    "CO": "colorado", "CT": "connecticut", "DE": "delaware", "FL": "florida", "GA": "georgia",
    "HI": "hawaii", "ID": "idaho", "IL": "illinois", "IN": "indiana", "IA": "iowa",
    "KS": "kansas", "KY": "kentucky", "LA": "louisiana", "ME": "maine", "MD": "maryland",
    "MA": "massachusetts", "MI": "michigan", "MN": "minnesota", "MS": "mississippi",
    "MO": "missouri", "MT": "montana", "NE": "nebraska", "NV": "nevada",
    "NH": "new hampshire", "NJ": "new jersey", "NM": "new mexico", "NY": "new york",
    "NC": "north carolina", "ND": "north dakota", "OH": "ohio", "OK": "oklahoma",
    "OR": "oregon", "PA": "pennsylvania", "RI": "rhode island", "SC": "south carolina",
    "SD": "south dakota", "TN": "tennessee", "TX": "texas", "UT": "utah", "VT": "vermont",
    "VA": "virginia", "WA": "washington", "WV": "west virginia", "WI": "wisconsin",
    "WY": "wyoming", "DC": "district columbia", "UK": "united kingdom", "US": "united states",
    "USA": "united states", "EU": "european union", "UN": "united nations",
}  # fmt: skip
# "passage 2", "[1]", "Document 3": references to the sources, not facts.
REFERENCE = re.compile(
    r"\[\d+\]|\b(?:passage|document|source|chunk|context|review|paragraph|step|option)s?"
    r" ?#?\d+(?::\d+)?(?:\s*(?:and|,|-|to)\s*\d+)*\b",
    re.IGNORECASE,
)
# Where a long sentence may be cut for quoting: after a comma, semicolon or brace.
_CUT = re.compile(r"(?<=[,;{}\[\]])")
# Small words that do not end a name: "Bureau of Labor Statistics".
_RUN_GLUE = frozenset({"of", "and", "for", "the", "de", "&"})
# A capitalised word right after one of these starts a sentence, clause or list item.
_OPENERS = frozenset('.:;!?"(*-•#>')


def stem(word: str) -> str:
    """A light suffix-stripping stem, then a cut to six letters: "reported" ~ "reporting"."""
    for suffix in ("ies", "ied", "ing", "ed", "es", "ly", "s"):
        if len(word) > len(suffix) + 3 and word.endswith(suffix):
            word = word[: -len(suffix)]
            break
    else:
        if len(word) > 4 and word.endswith("e"):
            word = word[:-1]  # "charge" ~ "charges", "charged", "charging"
    return word[:6]


@dataclass(frozen=True, slots=True)
class Tokens:
    words: tuple[str, ...]
    """Stems of the content words, in order."""
    names: tuple[str, ...]
    """Stems of capitalised words that do not start the text: likely names."""
    numbers: tuple[str, ...]
    """Canonical numbers written with digits."""
    number_words: tuple[str, ...]
    """Canonical values of numbers written as words ("four" → "4")."""
    acronyms: dict[str, tuple[str, ...]]
    """Initials of runs of capitalised words, with the runs' stems."""


@functools.lru_cache(maxsize=16384)
def tokens(text: str) -> Tokens:
    if not text.isascii():
        text = unicodedata.normalize("NFKC", text).translate(_QUOTES)
    text = REFERENCE.sub(" ", _CAMEL.sub(" ", text))
    if "_" in text:
        text = _PSEUDONYM_HASH.sub("x", text)
    words: list[str] = []
    names: list[str] = []
    numbers: list[str] = []
    number_words: list[str] = []
    acronyms: dict[str, tuple[str, ...]] = {}
    run: list[tuple[str, str]] = []  # (initial, stem) of a run of capitalised words
    for match in _TOKEN.finditer(text):
        kind = match.lastgroup
        if kind == "code":  # "A17", "COVID19": an identifier, checked like a number
            numbers.append(match.group().lower())
            _close(run, acronyms)
            continue
        if kind == "num":
            numbers.append(num.canonical(match.group(kind)))
            _close(run, acronyms)
            continue
        raw = match.group() if kind == "word" else match.group().replace(".", "")
        at = match.start() - 1
        while at >= 0 and text[at] == " ":
            at -= 1
        before = text[at] if at >= 0 else ""
        first = not before or before in _OPENERS
        if run and ((before and before in ",;:()") or not (raw[0].isupper() or raw in _RUN_GLUE)):
            _close(run, acronyms)
        capitalised = raw[:1].isupper()
        for key, initial in _parts(raw):
            words.append(key)
            if key[0] == "#":
                number_words.append(key[1:])
            elif capitalised:
                run.append((initial, key))
                if not first:
                    names.append(key)
    _close(run, acronyms)
    return Tokens(tuple(words), tuple(names), tuple(numbers), tuple(number_words), acronyms)


# One spelling for words with two: the stem cut would keep them apart.
SPELLINGS = {"ambiance": "ambience", "wifi": "wifi", "colour": "color", "favourite": "favorite"}


@functools.lru_cache(maxsize=65536)
def _parts(raw: str) -> tuple[tuple[str, str], ...]:
    """A word's content keys with their initials: stems, or "#4" for "four"."""
    lower = US_STATES.get(raw, raw).lower() if raw.isupper() else raw.lower()
    found = []
    whole = num.word_value(lower) is not None
    for part in (lower,) if whole else lower.replace(" ", "-").split("-"):
        value = num.word_value(part)
        if value is not None:
            # Soft: "one of them" need not be a number; matches "#4" from "4.0".
            found.append(("#" + value, ""))
        elif part not in _STOP and len(part) > 1:
            part = SPELLINGS.get(part, part)
            found.append((stem(num.MONTH_ABBREVIATIONS.get(part, part)), part[0]))
    return tuple(found)


def _close(run: list[tuple[str, str]], acronyms: dict[str, tuple[str, ...]]) -> None:
    """End a run of capitalised words: "Fair Labor Standards Act" gives "flsa"."""
    if len(run) >= 2:
        acronyms["".join(initial for initial, _ in run)] = tuple(s for _, s in run)
    run.clear()


_PLAIN_WORD = re.compile(r"[A-Za-z]+")


@functools.lru_cache(maxsize=16384)
def compounds(text: str) -> frozenset[str]:
    """Stems of adjacent words written as one: "take out" and "TakeOut" give "takeout",
    "Wi-Fi" gives "wifi", so a claim's closed compound finds the context's split one."""
    words = [w.lower() for w in _PLAIN_WORD.findall(_CAMEL.sub(" ", text))]
    return frozenset(
        stem(SPELLINGS.get(a + b, a + b))
        for a, b in itertools.pairwise(words)
        if len(a) > 1 and len(b) > 1 and a not in t.STOPWORDS and len(a + b) >= 5
    )


@dataclass(frozen=True, slots=True)
class Check:
    """How much of one claim the context covers."""

    words: int
    missing_words: tuple[str, ...]
    missing_names: tuple[str, ...]
    missing_numbers: tuple[str, ...]
    missing_run: int
    chunk: int | None
    quote: str | None
    quote_coverage: float

    @property
    def missing_share(self) -> float:
        return len(self.missing_words) / self.words if self.words else 0.0


class Evidence:
    """The context of one answer, indexed once for every claim of it."""

    def __init__(self, chunks: Sequence[str]) -> None:
        self.words: set[str] = set()
        self.numbers: set[str] = set()
        self.sentences: list[tuple[int, str, frozenset[str], frozenset[str]]] = []
        for index, chunk in enumerate(chunks):
            for sentence in _segments(chunk):
                found = tokens(sentence)
                nums = frozenset(found.numbers) | frozenset(found.number_words)
                self.sentences.append((index, sentence, frozenset(found.words), nums))
                self.words.update(found.words)
                self.words.update(compounds(sentence))
                self.words.update(found.acronyms)
                self.words.update("#" + n for n in nums)
                self.numbers.update(nums)
            implied_words, implied_numbers = num.implied(chunk)
            if "review" in chunk.lower():
                implied_words |= REVIEWERS
            self.words.update(stem(w) for w in implied_words)
            self.numbers.update(implied_numbers)
            self.words.update("#" + n for n in implied_numbers)

    def check(self, claim: str) -> Check:
        found = tokens(claim)
        known: set[str] = self.words
        for acronym, expansion in found.acronyms.items():
            if acronym in known:  # "Fair Labor Standards Act" where the context says FLSA
                known = known | set(expansion)
        missing_words = tuple(w for w in found.words if w not in known)
        run = longest = 0
        for word in found.words:
            run = run + 1 if word not in known else 0
            longest = max(longest, run)
        missing_names = tuple(w for w in found.names if w not in known)
        missing_numbers = tuple(n for n in found.numbers if n not in self.numbers)
        chunk, quote, coverage = self._quote(set(found.words), set(found.numbers))
        return Check(
            words=len(found.words),
            missing_words=missing_words,
            missing_names=missing_names,
            missing_numbers=missing_numbers,
            missing_run=longest,
            chunk=chunk,
            quote=quote,
            quote_coverage=coverage,
        )

    def _quote(self, words: set[str], numbers: set[str]) -> tuple[int | None, str | None, float]:
        """The chunk sentence sharing most of the claim's words and numbers."""
        wanted = len(words) + len(numbers)
        best: tuple[int | None, str | None, float] = (None, None, -1.0)
        for index, sentence, sentence_words, sentence_numbers in self.sentences:
            shared = len(words & sentence_words) + len(numbers & sentence_numbers)
            coverage = shared / wanted if wanted else 0.0
            if coverage > best[2]:
                best = (index, sentence, coverage)
        return best


def _segments(chunk: str, limit: int = 240) -> list[str]:
    """The chunk's sentences, long ones (records, run-on text) cut at commas and braces."""
    found = []
    for sentence in t.sentences(chunk):
        if len(sentence) <= limit:
            found.append(sentence)
            continue
        piece = ""
        for part in _CUT.split(sentence):
            if piece and len(piece) + len(part) > limit:
                found.append(piece.strip())
                piece = ""
            piece += part
        if piece.strip():
            found.append(piece.strip())
    return found
