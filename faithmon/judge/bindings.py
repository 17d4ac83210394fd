"""Bindings: a claim's subject and values must be supported together, clause by clause.

Looking a claim's words up across the whole context lets an answer built from true
pieces put together wrongly pass: another order's status, another plan's price,
another city's departure time. Here a claim is cut into clauses (``clauses``), each
clause's words, names and values (``values``: numbers with their units or currencies,
normalised so "500 mg" ~ "0.5 g" and "$5" differs from "€5") are looked up in the one
chunk sentence that covers the clause best, with its neighbours in the same chunk (an
explicit chain: "The K2 runs 120 minutes. In turbo mode, 45."). Names may also come
from earlier in that chunk, which usually introduces its subject once. ``bind`` then
says what the clause lacks there: words, names and values found nowhere, or found
only in another sentence (moved), and which values the sentence binds differently.
"""

from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Sequence
from dataclasses import dataclass

from . import numbers as num
from . import support as s
from .values import DIMENSIONS, Value, identifiers, swapped, values

# Where a sentence divides into clauses that each assert something.
CLAUSE = re.compile(
    r";|,\s*(?:and|but|while|whereas|so|although|though|yet|which|because|as)\s"
    r"|\s(?:but|whereas|because|while|although|though)\s|\sand\s|,\s(?=if\s|unless\s)"
    r"|\s(?:that|who)\s",
    re.IGNORECASE,
)
# A clause this small is glued back onto its neighbour: "apples and pears".
_MIN_CLAUSE_WORDS = 2


@functools.lru_cache(maxsize=16384)
def clauses(sentence: str) -> list[str]:
    """The sentence's clauses; pieces of fewer than two content words stay joined."""
    pieces = [p for p in CLAUSE.split(sentence) if p and p.strip(" ,")]
    merged: list[str] = []
    for piece in pieces:
        small = len(s.tokens(piece).words) < _MIN_CLAUSE_WORDS
        if merged and (small or len(s.tokens(merged[-1]).words) < _MIN_CLAUSE_WORDS):
            merged[-1] = f"{merged[-1]} {piece}"
        else:
            merged.append(piece)
    return merged or [sentence]


@dataclass(frozen=True, slots=True)
class Unit:
    """One chunk sentence, indexed."""

    chunk: int
    position: int
    """Its place among the chunk's sentences."""
    text: str
    words: frozenset[str]
    numbers: frozenset[str]
    values: tuple[Value, ...]
    sequence: tuple[str, ...]
    """Its content-word stems in order."""
    names: frozenset[str]


@dataclass(frozen=True, slots=True)
class Binding:
    """How one clause is held by its best sentence (with neighbours)."""

    unit: Unit | None
    words: int
    missing: tuple[str, ...]
    """Clause words absent from the window (the sentence and its neighbours)."""
    moved: tuple[str, ...]
    """Of those, the ones found elsewhere in the context."""
    missing_names: tuple[str, ...]
    """Names absent from the sentence's chunk (carried subject names included)."""
    missing_values: tuple[Value, ...]
    """Values the window does not hold."""
    conflicting: bool
    """A missing value whose unit the sentence binds to another number, or whose
    number it gives in another unit: a changed value, not an added one."""
    coverage: float
    """Share of the clause's words in the sentence itself."""
    swapped: bool = False
    """A missing value whose number the sentence writes with another unit or currency
    ("80 miles" against "80 km"): the number itself says which sentence is meant."""


class Index:
    """The context's sentences with their words and values, for binding clauses."""

    def __init__(self, evidence: s.Evidence, reach: int = 1) -> None:
        self.evidence = evidence
        self.reach = reach
        self.units: list[Unit] = []
        self.chunk_words: dict[int, set[str]] = {}
        self.chunk_values: dict[int, list[Value]] = {}
        self.identifiers: set[str] = set()
        self.names: set[str] = set()
        """Stems the context writes capitalised where no sentence starts: names."""
        for (chunk, text, words, nums), position in zip(
            evidence.sentences, _positions(evidence.sentences), strict=True
        ):
            found = s.tokens(text)
            # "FLSA" where the sentence spells out "Fair Labor Standards Act", and back.
            words = words | frozenset(found.acronyms)
            self.units.append(
                Unit(
                    chunk,
                    position,
                    text,
                    words,
                    nums,
                    values(text),
                    found.words,
                    frozenset(found.names),
                )
            )
            self.chunk_words.setdefault(chunk, set()).update(words)
            self.identifiers.update(identifiers(text))
            self.names.update(found.names)
            self.chunk_values.setdefault(chunk, []).extend(self.units[-1].values)

    def bind(
        self,
        clause: str,
        carried: Sequence[str] = (),
        carried_words: Sequence[str] = (),
        sentence_words: Sequence[str] = (),
    ) -> Binding:
        """How the context holds ``clause``; ``carried`` are subject names from an earlier
        clause (with that clause's words, ``carried_words``), which must come along.
        ``sentence_words`` are the whole claim's: a modifier it says somewhere is no
        rival ("essential and nonessential amino acids")."""
        found = s.tokens(clause)
        words = set(found.words)
        nums = set(found.numbers)
        wanted = len(words) + len(nums)
        best: Unit | None = None
        best_score = -1.0
        for unit in self.units:
            shared = len(words & unit.words) + len(nums & unit.numbers)
            if shared > best_score:
                best, best_score = unit, shared
        if best is None or wanted == 0:
            return Binding(None, len(found.words), (), (), (), (), False, 0.0)
        window = self._window(best)
        window_words: set[str] = set().union(*(u.words for u in window))
        window_numbers: set[str] = set().union(*(u.numbers for u in window))
        window_values = [v for u in window for v in u.values]
        for acronym, expansion in found.acronyms.items():
            if acronym in window_words:  # the clause spells out what the window abbreviates
                window_words.update(expansion)
        missing = tuple(w for w in found.words if w not in window_words)
        moved = tuple(w for w in missing if w in self.evidence.words)
        chunk_words = self.chunk_words.get(best.chunk, set())
        spelled = {w for a, e in found.acronyms.items() if a in chunk_words for w in e}
        chunk_words = chunk_words | spelled
        missing_names = tuple(
            n
            for n in found.names
            if n not in chunk_words
            and n in self.evidence.words
            and _rival(n, found.words, best)
            and self._paired(n, found.words, best.chunk)
            and not self._said_with(n, words, best)
        )
        if carried_words:
            missing_names += tuple(
                n
                for n in carried
                if n not in found.names
                and n not in chunk_words
                and _rival(n, carried_words, best)
                and not self._said_with(n, words, best)
            )
        coverage = (len(words & best.words) + len(nums & best.numbers)) / wanted
        if coverage >= _RIVAL_COVERAGE:
            missing_names += tuple(
                w
                for w in self._rival_modifiers(
                    found.words, best, _verbs(clause), frozenset(sentence_words)
                )
                if w not in window_words
                and w not in missing_names
                and not self._said_with(w, words, best)
            )
        if coverage >= _CODE_COVERAGE:
            missing_names += tuple(
                code
                for code in _rival_codes(clause, best.text)
                if code not in window_numbers
                and not self._said_with(code, words, best, numbers=True)
            )
        missing_values = []
        conflicting = exchanged = False
        for value in values(clause):
            if any(value.within(v) for v in window_values):
                continue
            if swapped(value, best.values):  # "250 g" against "250 mg", "€20" against "$20"
                missing_values.append(value)
                conflicting = exchanged = True
                continue
            if num.canonical(_plain(value.number)) in window_numbers:
                # The number is there: only a measured unit or currency changed matters.
                if value.unit in DIMENSIONS and any(
                    v.number == value.number and v.unit in DIMENSIONS and v.unit != value.unit
                    for v in best.values
                ):
                    missing_values.append(value)
                    conflicting = True
                continue
            if any(value.within(v) for v in self.chunk_values.get(best.chunk, [])):
                continue  # said elsewhere in the chunk: a summary's fusion, not a change
            if any(
                value.within(v) and unit.names <= words for unit in self.units for v in unit.values
            ):
                continue  # said in another passage of no other named subject: a fusion
            missing_values.append(value)
            conflicting = conflicting or (
                value.unit is not None and any(v.unit == value.unit for v in window_values)
            )
        return Binding(
            best,
            len(found.words),
            missing,
            moved,
            missing_names,
            tuple(missing_values),
            conflicting,
            coverage,
            exchanged,
        )

    def in_range(self, number: str) -> bool:
        """``number`` lies inside a range the context states ("aged 6 to 11")."""
        try:
            value = float(number)
        except ValueError:
            return False
        return any(
            v.upper is not None and v.number <= value <= v.upper
            for found in self.chunk_values.values()
            for v in found
        )

    def words(self, clause: str) -> tuple[str, ...]:
        """The clause's content-word stems."""
        return s.tokens(clause).words

    def evidence_names(self, clause: str) -> tuple[str, ...]:
        """The clause's names, to carry as the subject of the clauses after it."""
        return s.tokens(clause).names

    def _said_with(self, name: str, words: set[str], best: Unit, numbers: bool = False) -> bool:
        """Some sentence says ``name`` (a number when ``numbers``) with nearly as many
        of the clause's other words as ``best`` holds: the name is bound to what the
        clause says, not put in from another subject."""
        others = words - {name}
        if not others:
            return True
        bar = max(1, len(others & best.words) - 1)
        return any(
            name in (unit.numbers if numbers else unit.words) and len(others & unit.words) >= bar
            for unit in self.units
        )

    def _rival_modifiers(
        self,
        words: Sequence[str],
        best: Unit,
        verbs: frozenset[str] = frozenset(),
        said: frozenset[str] = frozenset(),
    ) -> list[str]:
        """Clause words that modify a head the best sentence gives another modifier,
        taken from a sentence that says them before that head: "passport" in "passport
        renewal" against "licence renewals", where another passage has "passport
        renewals". ``verbs`` (stems of "-ing" and "-ed" words) modify nothing."""
        found = []
        for at, word in enumerate(words[:-1]):
            head = words[at + 1]
            if word in best.words or word in verbs:
                continue
            if not _modified(head, best.sequence, said.union(words)):
                continue
            if any(
                unit.chunk != best.chunk and _adjacent(word, head, unit.sequence)
                for unit in self.units
            ):
                found.append(word)
        return found

    def _paired(self, name: str, words: Sequence[str], chunk: int) -> bool:
        """Another chunk says ``name`` next to the word the clause puts beside it: the
        clause took the name from that chunk and the rest from this one."""
        at = words.index(name)
        beside = {words[i] for i in (at - 1, at + 1) if 0 <= i < len(words)}
        for unit in self.units:
            if unit.chunk == chunk or name not in unit.words:
                continue
            sequence = unit.sequence
            for i, word in enumerate(sequence):
                if word == name and beside & {
                    sequence[j] for j in (i - 1, i + 1) if 0 <= j < len(sequence)
                }:
                    return True
        return False

    def _window(self, unit: Unit) -> list[Unit]:
        return [
            u
            for u in self.units
            if u.chunk == unit.chunk and abs(u.position - unit.position) <= self.reach
        ]


def _rival(name: str, words: Sequence[str], unit: Unit) -> bool:
    """The sentence puts another name where the clause has ``name``: "Nimbus Basic"
    against "Nimbus Unlimited", "Lisbon office" against "Ostrava office"."""
    at = words.index(name)
    sequence = unit.sequence
    for offset in (-1, 1):
        if not 0 <= at + offset < len(words):
            continue
        neighbour = words[at + offset]
        for j, word in enumerate(sequence):
            k = j - offset
            if (
                word == neighbour
                and 0 <= k < len(sequence)
                and sequence[k] in unit.names
                and sequence[k] not in words
            ):
                return True
    return False


# A clause this well covered by its sentence may still put another modifier on its
# head ("passport renewal" against "licence renewals") or number its model otherwise.
_RIVAL_COVERAGE = 0.8
_CODE_COVERAGE = 0.6
# A model name with its number: "Fjell 20", "Tessel K2".
_CODED = re.compile(r"\b([A-Z][a-z]+) (\d+)\b")


_VERB_FORM = re.compile(r"\b[a-z]+(?:ing|ed)\b")


def _verbs(clause: str) -> frozenset[str]:
    """Stems of the clause's "-ing" and "-ed" words: verbs and participles."""
    return frozenset(s.stem(w) for w in _VERB_FORM.findall(clause.lower()))


def _modified(head: str, sequence: Sequence[str], words: frozenset[str]) -> bool:
    """``sequence`` puts before ``head`` a word the clause does not say."""
    return any(
        w == head and sequence[j - 1] not in words and sequence[j - 1] not in s.GENERIC_WORDS
        for j, w in enumerate(sequence[1:], start=1)
    )


def _adjacent(first: str, second: str, sequence: Sequence[str]) -> bool:
    return any(a == first and b == second for a, b in itertools.pairwise(sequence))


def _rival_codes(clause: str, sentence: str) -> list[str]:
    """Numbers the clause gives a model name that the sentence numbers otherwise:
    "Fjell 20" against "Fjell 35"."""
    theirs = _CODED.findall(sentence)
    return [
        code
        for name, code in _CODED.findall(clause)
        if any(n == name and c != code for n, c in theirs)
    ]


def _positions(sentences: Sequence[tuple[int, str, frozenset[str], frozenset[str]]]) -> list[int]:
    counts: dict[int, int] = {}
    found = []
    for chunk, *_ in sentences:
        found.append(counts.get(chunk, 0))
        counts[chunk] = found[-1] + 1
    return found


def _plain(number: float) -> str:
    return f"{number:.6f}".rstrip("0").rstrip(".")
