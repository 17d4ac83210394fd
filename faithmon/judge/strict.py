"""Strict support: what the support score would call supported must be bound in one place.

The support score looks a claim's words up across the whole context, so a claim put
together from true pieces passes it: the Team plan's seat count said of the Starter
plan, the Bergen ferry's time said of the Oslo ferry, "reimbursable" where the sentence
says "not reimbursed", an order "cancelled" that its sentence says "shipped", or one
attribute more than the chunk gives ("... and is dishwasher-safe"). ``check`` looks for
each of these before a claim is called supported:

- **entity**: each value of the claim (a number with its unit, a time, a date, a
  weekday) must be said in a sentence that names the claim's subject (a name or code),
  or in a chunk about that subject whose sentence names no other one. When the
  subject's own sentence gives the same kind of value otherwise: contradicted;
  when the value belongs to another subject only: unsupported;
- **polarity**: the sentence that holds a clause negates what the clause asserts, or
  asserts what it negates (a leading "yes" or "no" only answers the question);
- **state**: a sentence naming the claim's subject gives it a state the clause's state
  excludes ("shipped" against "cancelled", "approved" against "rejected");
- **added**: a clause none of whose content words the context has anywhere: an
  attribute or predicate added to what the chunk says.

Each test asks for specific evidence (a shared subject, a value of the same kind, a
negation bearing on a word both sides say), so a faithful paraphrase passes them.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from . import bindings as b
from . import contradiction as c
from . import subjects as sub
from . import support as s
from . import text as t
from .subjects import Finding
from .values import Value, identifiers, values

# A clause's negation or state is judged against its sentence when the sentence holds
# at least this share of the clause's words.
HELD = 0.5
# ... and this share when they name no subject in common.
SAME = 0.9
# A clause more than this share of whose words its sentence (with its neighbours) lacks,
# though the context has them elsewhere, is not verified (bench/README.md).
BOUND = 1 / 3
# Words that only strengthen what they qualify: "fully reimbursable" says "reimbursable".
_INTENSIFIERS = frozenset(
    s.stem(w) for w in "fully completely totally entirely absolutely really truly".split()
)

# The reply before a claim: "Yes, ...", "No, ...". Its polarity is the clause's own.
_REPLY = re.compile(
    r"^\s*(?:(?:yes|no|yeah|nope|correct|right)\b[,.!:;\s-]*"
    r"|(?:unfortunately |sadly )?not(?: \w+)?\s*[:,;.!]\s)",
    re.IGNORECASE,
)
# Where a claim divides into phrases that each add something: clauses, list items,
# phrases of means or accompaniment.
_RANGE = re.compile(r"(\d)\s+(?:and|or|to)\s+(\d)")
_PHRASE = re.compile(r"[,;]\s|\s(?:and|or|as well as|plus|with|by|via)\s", re.I)
# An enumeration's items are phrases this short; beside this many items the context
# holds, one it has no word of is added.
_ITEM_WORDS = 4
_ITEM = re.compile(r"[,;]\s|\s(?:and|or)\s", re.I)
_LISTED = 2
# "Free of charge" says free, not charged.
_FREE = re.compile(r"\b(?:free of charge|at no (?:extra )?charge|no charge)\b", re.I)
# A record's "key": value pair; a clause that only sets a condition.
_RECORD = re.compile(r'"\w+":\s')
_CONDITIONAL = re.compile(r"\s*(?:if|unless|whether|when|while|whereas)\b", re.IGNORECASE)


def check(sentence: str, index: b.Index, about: str = "", question: str = "") -> Finding | None:
    """The first part of ``sentence`` its context does not bind; None if all are.

    ``about``: the question a short answer is read with (``reading.asked``): its names
    and codes are the answer's subject. Only a rival value or code then counts, as a
    question may bridge subjects, and its own words state no claim of the answer's."""
    claim = _REPLY.sub("", t.strip_end(sentence)) or sentence
    subject = sub.subject_of(f"{about}: {claim}" if about else claim, index)
    finding = next(
        (f for v in values(claim) if (f := sub.unbound(v, subject, claim, index))), None
    ) or (
        sub.swapped_code(claim, index)
        or sub.moved(claim, subject, sub.own(subject, index), index)
        or sub.shifted(claim, index, question, about)
    )
    if about:  # the rival must be said of what the question asks, not only its subject
        asked = frozenset(s.tokens(about).words)
        if finding is None or finding.unit is None or finding.verdict != "contradicted":
            rival = next(
                filter(None, (sub.asked_otherwise(v, asked, index) for v in values(claim))), None
            )
            return None if rival is None else Finding("contradicted", "asked", rival, claim)
        return (
            finding
            if len((asked - subject) & finding.unit.words) * 2 >= len(asked - subject)
            else None
        )
    if finding is not None:
        return finding
    added = _added(claim, index)
    if added is not None:
        return Finding("unsupported", "added", None, added)
    denied = _denied_item(_ITEM.split(_RANGE.sub(r"\1-\2", claim)), index)
    if denied is not None:
        return Finding("contradicted", "polarity", denied[1], denied[0])
    parts = b.clauses(claim)
    for clause in parts:
        words = frozenset(s.tokens(clause).words) - _INTENSIFIERS
        if not words:
            continue
        unit = index.bind(clause).unit
        if unit is None:
            continue
        there = b.clauses(unit.text)
        opposite = c.best_clause(words, unit.text, there)
        if _held(clause, words, opposite) < HELD:  # the clause naming the subject may not
            # be the one: "X is a non-smoking property; smoking is not permitted ..."
            opposite = max(there, key=lambda piece: _held(clause, words, piece))
        held = _held(clause, words, opposite)
        if held < HELD or _RECORD.search(unit.text) or _CONDITIONAL.match(clause):
            continue  # records.conflict judges a record; a condition asserts nothing
        shares = bool(subject & sub.terms(unit))
        around = c.subject(clause, parts[0])
        both = _polarity(clause)[1] & _polarity(opposite)[1]  # "stopped" and "no longer"
        if (shares or held >= SAME) and not both and c.negates(clause, opposite, around, unit.text):
            return Finding("contradicted", "polarity", unit, clause.strip(" ,"))
        if (shares or set(around) <= unit.words) and _flipped(
            clause, unit.text, subject | frozenset(around)
        ):
            return Finding("contradicted", "polarity", unit, clause.strip(" ,"))
        said = frozenset(s.tokens(_FREE.sub("free", unit.text)).words) | sub.states(
            unit.text, again=True
        )
        states = said | sub.states(opposite)  # "under review", "on its way"
        if shares and (
            _antonym(words, said) or sub.other_state(words | sub.states(clause), states)
        ):
            return Finding("contradicted", "state", unit, clause.strip(" ,"))
    return None


def unverified(sentence: str, index: b.Index) -> bool:
    """Whether a claim the support score holds has a part not bound in one place: a
    word the context lacks, a value or name missing from the clause's sentence and its
    neighbours, more than ``BOUND`` of its words found only elsewhere, or, in a clause
    with a value, any word found only elsewhere (the value may be another subject's)."""
    claim = _REPLY.sub("", t.strip_end(sentence)) or sentence
    said = sub.names(claim) | identifiers(claim) | frozenset(s.tokens(claim).words)
    mine = values(claim)
    for clause in b.clauses(claim):
        bound = index.bind(clause)
        if bound.missing_values or bound.missing_names or len(bound.missing) > len(bound.moved):
            return True
        if bound.unit is not None and _ambiguous(bound.unit, said, mine):
            return True
        if bound.moved and (len(bound.moved) > BOUND * bound.words or values(clause)):
            return True
    return False


def _ambiguous(unit: b.Unit, said: frozenset[str], mine: Sequence[Value]) -> bool:
    """The sentence says the same kind of thing of two subjects: it names the claim's
    subject and another code, or gives two values of the kind of one of the claim's. Which goes with
    which ("The P5 has a 4 Ah battery; the P3 a 2 Ah one") is beyond word matching."""
    if identifiers(unit.text) - said and said & sub.entities(unit):
        return True  # "Order A17 ... order B22": codes of two things in one sentence
    kinds = [v.unit for v in unit.values if v.unit is not None]
    return any(kinds.count(v.unit) >= 2 for v in mine if v.unit is not None)


def _held(clause: str, words: frozenset[str], piece: str) -> float:
    """The share of the clause's words ``piece`` says, or of its predicates ("allowed"
    for "permitted"), whichever is more."""
    mine, theirs = _polarity(clause), _polarity(piece)
    predicates = mine[0] | mine[1]
    shared = len(predicates & (theirs[0] | theirs[1])) / len(predicates) if predicates else 0
    return max(len(words & frozenset(s.tokens(piece).words)) / len(words), shared)


def _antonym(words: frozenset[str], said: frozenset[str]) -> bool:
    """The clause uses a word whose opposite the sentence uses instead, and the clause
    does not say that opposite too ("opens at 9:00 and closes at 20:00")."""
    return any((c.ANTONYMS.get(word, frozenset()) & said) - words for word in words - said)


def _added(claim: str, index: b.Index) -> str | None:
    """A part of the claim that the context has no word of anywhere: a clause, a list
    item or phrase of means ("with gzip", "by express courier") of at least two content
    words, or an item of an enumeration whose other items the context holds ("free
    Wi-Fi, a work desk, a minibar and blackout curtains"): an attribute or predicate
    added to what the chunks say."""
    joined = _RANGE.sub(r"\1-\2", claim)  # "between 2 and 11" is one phrase
    clauses = b.clauses(joined)
    items = _ITEM.split(joined)
    phrases = [
        p.strip(" ,;")
        for p in dict.fromkeys([*_PHRASE.split(joined), *items])
        if p and not _CONDITIONAL.match(p)
    ]
    for part, least in (*((k, 1) for k in clauses), *((p, 2) for p in phrases)):
        if len(clauses) < 2 and least == 1:
            continue  # the whole claim: the support score judges it
        words = frozenset(s.tokens(part).words) - _INTENSIFIERS
        if len(words) >= least and not words & index.evidence.words:
            return part.strip(" ,")
    return _unlisted(items, index)


def _unlisted(phrases: Sequence[str], index: b.Index) -> str | None:
    """An item of an enumeration (a run of short phrases: "free Wi-Fi, a work desk, a
    minibar and blackout curtains") that the context has no word of, where it holds at
    least two other items of the run whole, one of them before it. A run's first
    phrase may be a turn of speech ("Optionally, ...", "..., followed by") or the
    head the items hang on, not an item; the head's last words are its first item
    ("takes household paint, garden waste, ..."): two content words of which the
    context has neither are added too."""
    run: list[tuple[str, frozenset[str]]] = []
    head = ""
    for phrase in [*(p.strip(" ,;") for p in phrases), ""]:
        if phrase and len(phrase.split()) <= _ITEM_WORDS:
            run.append((phrase, frozenset(s.tokens(phrase).words) - _INTENSIFIERS))
            continue
        held = [bool(words) and words <= index.evidence.words for _, words in run]
        if sum(held) >= _LISTED:
            for at, (item, words) in enumerate(run):
                if words and not words & index.evidence.words and any(held[:at]):
                    return item
            last = " ".join(head.split()[-_ITEM_WORDS + 1 :])
            ending = s.tokens(last).words[-2:]
            if len(ending) == 2 and not set(ending) & index.evidence.words:
                return last
        run, head = [], phrase
    return None


def _denied_item(phrases: Sequence[str], index: b.Index) -> tuple[str, b.Unit] | None:
    """An item of an enumeration the claim asserts that the context says only under a
    negation: "fine for swimming, snorkelling and scuba diving" against "It is not
    suitable for scuba diving." Every sentence holding the item's words must deny them,
    so an item the context allows somewhere (for something else, maybe) is left alone."""
    items = [p.strip(" ,;") for p in phrases]
    short = [p for p in items if p and len(p.split()) <= _ITEM_WORDS]
    if len(short) < _LISTED or any(_polarity(p)[1] for p in items):
        return None
    for item in short:
        words = frozenset(s.tokens(item).words)
        holders = [u for u in index.units if words and words <= u.words]
        if holders and all(words <= _denied_words(u.text) for u in holders):
            return item, holders[0]
    return None


def _denied_words(sentence: str) -> frozenset[str]:
    """The content words a negation covers after it in its stretch, the first few ("not
    suitable for scuba diving" covers all three)."""
    found: set[str] = set()
    for stretch in _STRETCH.split(t.normalise(sentence).replace("n't", " not")):
        words = _WORD.findall(stretch)
        at = next((i for i, word in enumerate(words) if word in _NEGATORS), None)
        if at is not None:
            found.update(s.tokens(" ".join(words[at + 1 :])).words[:_DENIED_WORDS])
    return frozenset(found)


_DENIED_WORDS = 4


def _flipped(clause: str, sentence: str, subject: frozenset[str]) -> bool:
    """A predicate one side negates and the other asserts: "can be exchanged" against
    "cannot be returned or exchanged", "accepts walk-ins" against "walk-ins are not
    accepted", "is allowed" against "is not permitted"."""
    mine, theirs = _polarity(clause), _polarity(sentence)
    flipped = (mine[0] & (theirs[1] - theirs[0])) | (mine[1] & (theirs[0] - theirs[1]))
    return bool(flipped - subject - _GENERIC)


def _polarity(text: str) -> tuple[frozenset[str], frozenset[str]]:
    """(asserted, negated) predicate stems of ``text``: what each negation bears on is
    the first content word after it within its stretch of punctuation, and the words
    joined to that one by "or" or "nor" ("cannot be returned or exchanged"); "and"
    starts another predicate more often. A word said both ways is in both."""
    normal = _NOT_PREDICATE.sub(" ", c.IDIOMS.sub(" ", t.normalise(text).replace("n't", " not")))
    asserted: set[str] = set()
    negated: set[str] = set()
    for stretch in _STRETCH.split(normal):
        words = _WORD.findall(stretch)
        if _SUBJECT_NEGATORS & set(words):
            continue  # "Neither A nor B has ...": c.negates reads it
        bears: set[int] = set()
        for at, word in enumerate(words):
            if word not in _NEGATORS:
                continue
            after = at + 1
            while after < len(words) and (
                words[after] in _NEGATION_LINKS or words[after] in t.STOPWORDS
            ):
                after += 1
            while after < len(words) and words[after] not in t.STOPWORDS:
                bears.add(after)
                if after + 2 < len(words) and words[after + 1] in ("or", "nor"):
                    after += 2
                else:
                    break
        for at, word in enumerate(words):
            if word in _MODALS and at not in bears and words[at + 1 : at + 2] != ["not"]:
                asserted.add(_ALLOWED)  # "you can smoke" says smoking is allowed
            if word in t.STOPWORDS or word in _NEGATORS:
                continue
            stem = _predicate(word)
            if stem in _DENYING:  # "excluded": not covered
                negated.add(_DENYING[stem])
            else:
                (negated if at in bears else asserted).add(stem)
    return frozenset(asserted), frozenset(negated)


def _predicate(word: str) -> str:
    """A word's stem, not cut short ("products" and "produced" differ), one per meaning
    for the words of permission and of cover."""
    stem = _whole_stem(word)
    return _SAME_MEANING.get(stem, stem)


def _whole_stem(word: str) -> str:
    """A suffix-stripping stem cut to seven letters ("reimbursable" ~ "reimbursed")."""
    if len(word) > 4:
        word = _SUFFIX.sub("", word, count=1)
    elif len(word) == 4 and word.endswith("s") and word[2] not in "siu":
        word = word[:3]  # "runs" ~ "run", but not "pass", "plus", "axis"
    return word[:7]


_SUFFIX = re.compile(r"(?:ies|ied|ing|ed|es|ly|s|e)$")


_WORD = re.compile(r"[a-z]+(?:-[a-z]+)*")
_GENERIC = frozenset(s.stem(w) for w in s.GENERIC_WORDS)
# "stopped sending" and "no longer sends" both deny sending.
_NEGATORS = frozenset({"not", "no", "never", "cannot", "nor", "stopped", "ceased"})
# Negations that bear on no predicate: "if not, ...", "not all ovens", "whether or not".
_NOT_PREDICATE = re.compile(r"\b(?:if|or|whether) not\b|\bnot (?:all|every|only|just)\b")
_STRETCH = re.compile(r"[,;:()!?]+\s|\.\s")
_SUBJECT_NEGATORS = frozenset({"neither", "nobody", "none", "nothing", "noone"})
# Words between a negation and the predicate it bears on: "is not yet", "do not need to".
_NEGATION_LINKS = frozenset(
    "be is are was were been being do does did have has had will would can could should "
    "may might must shall a an the to yet any longer need needs necessarily able".split()
)
# Words that deny another: "excluded" says not covered, "prohibited" not allowed.
_DENYING = {
    _whole_stem(w): _whole_stem(head)
    for head, words in (
        ("covered", "excluded uncovered"),
        ("allowed", "prohibited forbidden banned disallowed refused"),
        ("refundable", "non-refundable nonrefundable"),
        ("enabled", "disabled"),
        ("available", "unavailable"),
        ("active", "inactive"),
        ("required", "optional"),
    )
    for w in words.split()
}
# "Can" and "may" grant what follows them: the claim says it is allowed.
_MODALS = frozenset({"can", "may"})
_ALLOWED = _whole_stem("allowed")
_SAME_MEANING = {
    _whole_stem(w): _whole_stem(head)
    for head, words in (
        ("allowed", "allowed permitted authorised authorized accepted welcome"),
        ("covered", "covered included"),
        ("required", "required mandatory compulsory"),
    )
    for w in words.split()
}
