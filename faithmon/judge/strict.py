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

from . import bindings as b
from . import contradiction as c
from . import subjects as sub
from . import support as s
from . import text as t
from .subjects import Finding
from .values import values

# A clause's negation or state is judged against its sentence when the sentence holds
# at least this share of the clause's words.
HELD = 0.5
# ... and this share when they name no subject in common.
SAME = 0.9
# Words that only strengthen what they qualify: "fully reimbursable" says "reimbursable".
_INTENSIFIERS = frozenset(
    s.stem(w) for w in "fully completely totally entirely absolutely really truly".split()
)

# The reply before a claim: "Yes, ...", "No, ...". Its polarity is the clause's own.
_REPLY = re.compile(r"^\s*(?:yes|no|yeah|nope|correct|right)\b[,.!:;\s-]*", re.IGNORECASE)
# A record's "key": value pair; a clause that only sets a condition.
_RECORD = re.compile(r'"\w+":\s')
_CONDITIONAL = re.compile(r"\s*(?:if|unless|whether|when|while|whereas)\b", re.IGNORECASE)


def check(sentence: str, index: b.Index, answers: bool = True) -> Finding | None:
    """The first part of ``sentence`` its context does not bind; None if all are.

    ``answers``: the claim answers a question. A summary (no question) condenses and
    rewords: there only a negation or state that its sentence reverses counts, as the
    subject-binding and added-part tests flag mostly faithful rewording in summaries
    (RAGTruth's summaries and record descriptions, bench/README.md)."""
    claim = _REPLY.sub("", t.strip_end(sentence)) or sentence
    subject = sub.subject_of(claim, index)
    if answers:
        for value in values(claim):
            finding = sub.unbound(value, subject, claim, index)
            if finding is not None:
                return finding
        finding = sub.swapped_code(claim, index) or sub.moved(
            claim, subject, sub.own(subject, index), index
        )
        if finding is not None:
            return finding
    parts = b.clauses(claim)
    for clause in parts:
        words = frozenset(s.tokens(clause).words) - _INTENSIFIERS
        if not words:
            continue
        if answers and len(parts) > 1 and not words & index.evidence.words:
            return Finding("unsupported", "added", None, clause.strip(" ,"))
        unit = index.bind(clause).unit
        if unit is None:
            continue
        opposite = c.best_clause(words, unit.text, b.clauses(unit.text))
        held = len(words & frozenset(s.tokens(opposite).words)) / len(words)
        if held < HELD or _RECORD.search(unit.text) or _CONDITIONAL.match(clause):
            continue  # records.conflict judges a record; a condition asserts nothing
        shares = bool(subject & sub.terms(unit))
        around = c.subject(clause)
        if (shares or held >= SAME) and (
            c.negates(clause, opposite, around, unit.text) or _flipped(clause, opposite, subject)
        ):
            return Finding("contradicted", "polarity", unit, clause.strip(" ,"))
        if shares and (c.antonym(words, unit.words) or sub.other_state(words, unit.words)):
            return Finding("contradicted", "state", unit, clause.strip(" ,"))
    return None


def _flipped(clause: str, sentence: str, subject: frozenset[str]) -> bool:
    """A predicate one side negates and the other asserts: "can be exchanged" against
    "cannot be exchanged"."""
    mine, theirs = _polarity(clause), _polarity(sentence)
    if mine[1] and theirs[1]:
        return False  # both sides negate: what each negates is for c.negates
    return bool(((mine[0] & theirs[1]) | (mine[1] & theirs[0])) - subject)


def _polarity(text: str) -> tuple[frozenset[str], frozenset[str]]:
    """(asserted, negated) predicate stems of ``text``: a negation's predicate is the
    first content word it bears on."""
    normal = c.IDIOMS.sub(" ", t.normalise(text).replace("n't", " not"))
    negated = {scope[0] for scope in c.scopes(normal) if scope}
    return frozenset(s.tokens(normal).words) - negated, frozenset(negated)
