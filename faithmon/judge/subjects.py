"""Which subject a claim's values, codes and states are said of.

A claim joins a subject (a name or code: "Order B22", "the Kite 13", "Riverside") to
what it says of it: values, other codes, a state. Each must be said of that subject in
the context, not of another one beside it:

- ``unbound``: a value said in a sentence of another subject only ("20 seats" from the
  Team plan's sentence said of the Starter plan). When the subject's own clause gives
  the same kind of value otherwise, the claim is contradicted;
- ``swapped_code``: a code where the claim's best sentence has another of the same
  family ("rack R3" where the sentence says "rack R5", "TX-4471" beside "Order A17"
  said of Order B22);
- ``moved``: a state word the subject's sentences do not say and another subject's
  sentence does ("INC-2207 is still being investigated" where "investigating" is
  INC-2210's state).

A sentence that names no other subject binds its values to any (a general statement,
or the chunk's own subject), so faithful answers that combine a plan's sentence with a
policy's pass.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass

from ..model import Verdict
from . import bindings as b
from . import contradiction as c
from . import support as s
from .values import IDENTIFIER, Value, identifiers, values

# Names that are themselves values (weekdays, months): they bind nothing.
CALENDAR = frozenset(
    s.stem(w)
    for w in "monday tuesday wednesday thursday friday saturday sunday mondays tuesdays "
    "wednesdays thursdays fridays saturdays sundays january february march april may june "
    "july august september october november december".split()
)
# States a subject is in one of at a time: an order, a request, an account, a service.
STATES = tuple(
    frozenset(s.stem(w) for w in family.split())
    for family in (
        "pending processing shipped dispatched transit delivered cancelled returned "
        "refunded lost paused way",
        "pending review reviewing approved accepted rejected refused denied declined "
        "granted withdrawn",
        "active inactive suspended blocked closed frozen expired deprecated cancelled "
        "terminated paused",
        "investigating identified monitoring resolved",
        "restored interrupted outage",
        "progress complete completed finished",
        "delayed time cancelled boarding departed",
        "enabled disabled",
        "open closed",
    )
)
_STATE_WORDS = frozenset().union(*STATES, c.ANTONYMS)
_DIGIT = re.compile(r"\d+")
# The phrase of a clause a value stands in: its names are the value's subject.
_PHRASE = re.compile(r"[,;]\s")
# A sentence of all of a kind ("all Solvair flights") binds its values to each one.
_UNIVERSAL = re.compile(r"\b(?:all|every|each|any|both)\b", re.I)


@dataclass(frozen=True, slots=True)
class Finding:
    """Why a claim the support score holds is not supported."""

    verdict: Verdict
    basis: str
    """``entity``, ``code``, ``state``, ``polarity`` or ``added``."""
    unit: b.Unit | None
    """The sentence that says otherwise (for ``contradicted``)."""
    part: str
    """The claim's part the context does not bind."""


@functools.lru_cache(maxsize=16384)
def names(text: str) -> frozenset[str]:
    """Stems of the names in ``text`` but those of weekdays, months and codes' letters."""
    return frozenset(s.tokens(IDENTIFIER.sub(" ", text)).names) - CALENDAR


def entities(unit: b.Unit) -> frozenset[str]:
    """The names and codes a sentence says."""
    return names(unit.text) | identifiers(unit.text)


def terms(unit: b.Unit) -> frozenset[str]:
    return unit.words | unit.numbers | entities(unit)


def subject_of(claim: str, index: b.Index) -> frozenset[str]:
    """The claim's codes that the context has, else its names there: what it is about."""
    codes = frozenset(i for i in identifiers(claim) if i in index.identifiers)
    if codes:
        return codes
    known = index.evidence.words | index.evidence.numbers
    found = set(names(claim))
    first = s.tokens(claim).words[:1]
    if first and claim.lstrip()[:1].isupper() and first[0] in index.names:
        found.add(first[0])  # "Riverside will be ...": a name the context writes as one
    return frozenset(n for n in found if n in known)


def own(subject: frozenset[str], index: b.Index) -> list[b.Unit]:
    """The sentences about ``subject``: those naming it, and the sentences of its
    chunks that name nothing else."""
    if not subject:
        return []
    naming = [u for u in index.units if subject & terms(u)]
    chunks = {u.chunk for u in naming}
    return [
        u for u in index.units if u in naming or (u.chunk in chunks and not entities(u) - subject)
    ]


def unbound(value: Value, subject: frozenset[str], claim: str, index: b.Index) -> Finding | None:
    """``value`` said only of another subject than the claim's; None when it is bound."""
    if not subject:
        return None
    holders = [u for u in index.units if any(value.within(v) for v in u.values)]
    if not holders:
        return None  # said nowhere: the number rules judge it
    part = next((p for p in b.clauses(claim) if any(value.within(v) for v in values(p))), claim)
    if subject & identifiers(part) or subject & names(part):
        rival = _rebound(value, subject, claim, index)
        if rival is not None:
            return Finding("contradicted", "entity", rival, part.strip(" ,"))
    near = next((p for p in _PHRASE.split(part) if any(value.within(v) for v in values(p))), part)
    local = subject & (names(near) | identifiers(near)) or subject
    if any(local <= terms(u) for u in holders):
        return None  # "Corvid Notes Team" does not bind to "the Starter plan of Corvid Notes"
    said = frozenset(s.tokens(claim).words) | identifiers(claim) | names(claim)
    if any(not entities(u) - said or _UNIVERSAL.search(u.text) for u in holders):
        return None  # said of no other subject or of all: a general statement
    for unit in index.units:
        if subject & terms(unit) and any(
            v.unit == value.unit and value.unit is not None and not value.within(v)
            for v in unit.values
        ):
            return Finding("contradicted", "entity", unit, part.strip(" ,"))
    return Finding("unsupported", "entity", None, part.strip(" ,"))


def _rebound(value: Value, subject: frozenset[str], claim: str, index: b.Index) -> b.Unit | None:
    """A sentence about the subject that gives it another value of the kind ``value``
    is (one the claim does not also state), where none of them gives it ``value``.
    A sentence of the subject's chunk that does not name it speaks of it only when it
    shares half the claim's other words ("In turbo mode, 45 minutes" after "The K2 runs
    120 minutes"; not "The airport shuttle runs every 20 minutes" after "Night bus N2")."""
    stated = values(claim)
    words = frozenset(s.tokens(claim).words) - subject
    rival = None
    for unit in own(subject, index):
        naming = subject <= terms(unit)
        if not naming and len(words & unit.words) * 2 < len(words):
            continue
        found = unit.values
        if any(value.within(v) for v in found):
            return None
        if (
            rival is None
            and naming
            and any(
                v.unit == value.unit and v.unit is not None and not any(w.within(v) for w in stated)
                for v in found
            )
        ):
            rival = unit
    return rival


def asked_otherwise(value: Value, asked: frozenset[str], index: b.Index) -> b.Unit | None:
    """A sentence about what the question asks that gives another value of the kind
    ``value`` is, where none of them gives ``value``: "$35" to "How much is the Lumo
    desk lamp?" against "The Lumo desk lamp costs $30"."""
    if value.unit is None:
        return None
    about = asked_about(asked, index)
    # Where the sentences hold only most of the question, their chunk may say the rest:
    # "15 days at 60%" in the chunk of "25 days of annual leave".
    whole = all(asked <= terms(u) for u in about)
    if any(
        value.within(v)
        for u in about
        for v in (u.values if whole else index.chunk_values.get(u.chunk, []))
    ):
        return None
    return next(
        (u for u in about if any(v.unit == value.unit and not value.within(v) for v in u.values)),
        None,
    )


def asked_about(asked: frozenset[str], index: b.Index) -> list[b.Unit]:
    """The sentences that hold the most of the question's words, at least two thirds."""
    if not asked:
        return []
    held = [(len(asked & terms(u)), u) for u in index.units]
    most = max((n for n, _ in held), default=0)
    if most * 3 < len(asked) * 2:
        return []
    return [u for n, u in held if n == most]


def swapped_code(claim: str, index: b.Index) -> Finding | None:
    """A code of the claim that its best sentence replaces with another of the same
    family: "rack R3" against "rack R5", "Order B22" against "Order A17"."""
    mine = identifiers(claim)
    for part in b.clauses(claim):
        codes = identifiers(part)
        if not codes:
            continue
        unit = index.bind(part).unit
        if unit is None:
            continue
        theirs = identifiers(unit.text)
        for code in sorted(codes - theirs):
            if code in index.identifiers and any(
                _family(code) == _family(other) for other in theirs - mine
            ):
                return Finding("contradicted", "code", unit, part.strip(" ,"))
    return None


def _family(code: str) -> str:
    """ "tx-4471" → "tx-9", "r3" and "b12" → "a9": codes that name things of one kind."""
    shape = _DIGIT.sub("9", code)
    letters = len(shape) - len(shape.lstrip("abcdefghijklmnopqrstuvwxyz"))
    return shape if letters >= 2 else re.sub(r"^[a-z]", "a", shape)


def moved(
    claim: str, subject: frozenset[str], mine: list[b.Unit], index: b.Index
) -> Finding | None:
    """A state word of the claim that the sentences about its subject (``mine``) do not
    say and a sentence about another subject does."""
    if not mine:
        return None
    said = frozenset().union(*(u.words for u in mine))
    rivals = [u for u in index.units if u not in mine and entities(u) - subject]
    theirs = frozenset().union(*(u.words for u in rivals)) if rivals else frozenset()
    found = s.tokens(claim).words
    shifted = [w for w in found if w not in said and w in theirs and w in _STATE_WORDS]
    if not shifted or len(set(found) & said) < len(set(found)) / 2:
        return None
    states = [u for u in mine if other_state(frozenset(shifted), u.words)]
    if states:
        return Finding("contradicted", "state", states[0], claim)
    return Finding("unsupported", "entity", next(u for u in rivals if shifted[0] in u.words), claim)


def states(text: str, again: bool = False) -> frozenset[str]:
    """The state words of ``text``, those the content words leave out included ("under
    review", "on its way"); with ``again``, only those made again ("reopen" says open)."""
    found = set()
    for word in _LETTERS.findall(text.lower()):
        stem = s.stem(word)
        if stem not in _STATE_WORDS and word.startswith("re"):
            found.add(s.stem(word[2:]))
        elif not again:
            found.add(stem)
    return frozenset(found) & _STATE_WORDS


_LETTERS = re.compile(r"[a-z]+")


def other_state(words: frozenset[str], said: frozenset[str]) -> bool:
    """``words`` give a state that ``said`` replaces with another of its kind."""
    for family in STATES:
        ours = words & family
        if ours and not ours & said and (family & said) - words:
            return True
    return False


def shifted(claim: str, index: b.Index, question: str, about: str = "") -> Finding | None:
    """A value the claim's clause states where the context's clause that holds it
    speaks of something else, and the clause that speaks of what the question asks
    gives another value of the kind: "recycling is picked up every other Monday", asked
    when recycling is collected, against "recycling is collected every other Friday and
    general waste every Monday".

    A lowercase subject ("recycling", "spring term", "approved expenses") binds its
    value the way a name does, but only its clause says so. Each of the clause's words
    that one clause of the context alone has votes for that clause (a clause with no
    value of its own continues the one before it: "on weekends and public holidays");
    the value is moved when a clause of its chunk (or of another chunk giving a value of
    its kind) that gives another value of its kind, and not it, draws more votes than
    the clauses that give it, among them a word of the question: what was asked is said
    there. Names are left to ``unbound``; a word
    several clauses share (the verb, "plans") votes for none, and words that only go
    with the kind of value ("costs ... per month") do not make the question's subject.
    A code is read the same way ("RMA-301 for the blender and RMA-318 for the
    toaster"), against codes of its family. A short answer's words are the question's
    (``about``); its values alone are checked."""
    asked = frozenset(s.tokens(question).words)
    if not asked:
        return None
    pieces = _pieces(index)
    given = [v for v in values(question) if v.unit is not None and not v.worded]
    for part in b.clauses(claim):
        stated = [v for v in values(part) if v.unit is not None and not v.worded]
        codes = identifiers(part) & index.identifiers
        # A short answer ("250 mg/5 mL") speaks of what the question asks (``about``).
        words = frozenset(s.tokens(f"{about} {part}").words) - CALENDAR - index.names
        # The claim's other values and codes vote too, for the clause that gives them:
        # "the 08:15 to Eastbridge ... platform 7" against "08:15 to Eastbridge, platform
        # 4; 08:22 to Millford, platform 7".
        tags = {f"={i}": v for i, v in enumerate(stated)}
        given_tags = {t for t, v in tags.items() if any(v.within(q) for q in given)}
        given_tags |= {f"#{c}" for c in codes & identifiers(question)}
        extra = {
            p: frozenset(t for t, v in tags.items() if any(v.within(w) for w in p.values))
            | frozenset(f"#{c}" for c in p.codes & codes)
            for p in pieces
        }
        marks: list[tuple[str, list[_Piece], Callable[[_Piece], bool]]] = [
            (
                tag,
                [p for p in pieces if any(value.within(v) for v in p.values)],
                functools.partial(_other_value, values(part), value),
            )
            for tag, value in tags.items()
        ]
        marks += [  # "RMA-301 for the blender and RMA-318 for the toaster"
            (
                f"#{code}",
                [p for p in pieces if code in p.codes],
                functools.partial(_other_code, codes, code),
            )
            for code in codes
        ]
        for tag, holding, other in marks:
            if any(q.within(v) for q in given for h in holding for v in h.values):
                continue  # "15 days at 60%" to "... a 60% part-timer": the question binds it
            # Not the marks its own clauses give too ("from 14:00 to 17:00"): one statement.
            theirs = frozenset().union(*(extra[h] for h in holding))
            voters = words | frozenset(
                t for t in (*tags, *(f"#{c}" for c in codes)) if t != tag and t not in theirs
            )
            chunks = {h.chunk for h in holding}
            asking = (voters & asked) | (voters & given_tags)
            # First among the clauses of the value's chunk, then among those of every
            # chunk that gives a value of its kind ("student accounts ... 1,000 EUR" in a
            # chunk of its own beside "current accounts ... 2,500 EUR").
            rivals = chunks | {p.chunk for p in pieces if other(p)}
            for field in (
                [p for p in pieces if p.chunk in chunks],
                [p for p in pieces if p.chunk in rivals],
            ):
                rival = _outvoted(asking, voters, field, holding, other, extra)
                if rival is not None:
                    return Finding("contradicted", "moved", rival.unit, part.strip(" ,"))
    return None


def _other_value(stated: tuple[Value, ...], value: Value, piece: _Piece) -> bool:
    """The piece gives a value of ``value``'s kind that the claim does not state, not
    even as a bare number ("Dolarex 400" for "400 mg")."""
    return any(v.unit == value.unit and not any(w.within(v) for w in stated) for v in piece.values)


def _other_code(codes: frozenset[str], code: str, piece: _Piece) -> bool:
    """The piece names a code of ``code``'s family that the claim does not name."""
    return any(_family(o) == _family(code) for o in piece.codes - codes)


def _outvoted(
    asked: frozenset[str],
    words: frozenset[str],
    field: list[_Piece],
    holding: list[_Piece],
    other: Callable[[_Piece], bool],
    extra: dict[_Piece, frozenset[str]],
) -> _Piece | None:
    """The clause of ``field`` that gives another value or code of the kind (``other``)
    and draws more of ``words`` than the clauses that give the claim's (``holding``),
    one of ``asked`` among them. A word votes for the one clause of ``field`` that has
    it; clauses that give the same values in one sentence count together."""
    said = {p: p.words | extra.get(p, frozenset()) for p in field}
    drawn: dict[tuple[int, tuple[Value, ...], frozenset[str]], set[str]] = {}
    for piece in field:
        others = frozenset().union(*(said[o] for o in field if o is not piece))
        drawn.setdefault(piece.group, set()).update(words & said[piece] - others)
    mine = sum(len(drawn.get(p.group, ())) for p in dict.fromkeys(holding))
    for piece in field:
        votes = drawn[piece.group]
        if len(votes) > mine and votes & asked and piece not in holding and other(piece):
            return piece
    return None


@dataclass(frozen=True, slots=True)
class _Piece:
    """One clause of a context sentence, with the values it gives or continues and the
    codes it names."""

    chunk: int
    unit: b.Unit
    words: frozenset[str]
    values: tuple[Value, ...]
    codes: frozenset[str]

    @property
    def group(self) -> tuple[int, tuple[Value, ...], frozenset[str]]:
        """What the piece gives in its sentence: pieces giving the same count together."""
        return (id(self.unit), self.values, self.codes)


def _pieces(index: b.Index) -> list[_Piece]:
    """Each sentence's clauses. A piece with no word, value or code of its own is part
    of the one before; one that gives values or codes with a word at most ("and
    10:00-18:00 on weekends", "and RMA-318 for the toaster") says them of what the one
    before speaks of, so it has that one's words before its first number too, not its
    qualifiers ("125 mg/5 mL for children and 250 mg/5 mL for adults")."""
    found: list[_Piece] = []
    for unit in index.units:
        carried: tuple[Value, ...] = ()
        head: frozenset[str] = frozenset()
        first = len(found)
        for clause in b.CLAUSE.split(unit.text):
            own = tuple(v for v in values(clause) if v.unit is not None and not v.worded)
            codes = identifiers(clause)
            words = frozenset(s.tokens(clause).words) - index.names - CALENDAR
            if len(found) > first and not (own or codes or words):
                continue
            if len(found) > first and (own or codes) and len(words) <= 1:
                words |= head  # "... open 8-22 on weekdays and 10-18 on weekends"
            else:  # what the clause speaks of: its words before its first number
                head = (
                    frozenset(s.tokens(_DIGIT.split(clause, 1)[0]).words) - index.names - CALENDAR
                )
            carried = own or carried
            found.append(_Piece(unit.chunk, unit, words, carried, codes))
    return found
