"""Contradiction and over-reach between a claim's clause and the sentence that binds it.

The offline judge calls a clause ``contradicted`` when the sentence holding its subject
says the opposite: its negation (``negates``: exactly one side negates a predicate and
its object that the other says, for the same subject), a clear antonym (``antonym``:
"shipped" against "cancelled", "open" against "closed") or another status for the same
subject. A clause that turns the sentence's "some", "usually" or "Flex fares" into
"all", "always" or "all fares" (``overreaches``) is not supported by it. Each test is
narrow on purpose: the caller also requires the rest of the clause to match closely,
because on multi-passage answers a loose test flags faithful paraphrases.
"""

from __future__ import annotations

import re

from . import support as s
from . import text as t

_PAIRS = """shipped:cancelled shipped:pending dispatched:cancelled delivered:cancelled
delivered:lost delivered:pending delivered:returned refunded:charged approved:rejected
approved:denied approved:declined accepted:rejected accepted:declined open:closed
opened:closed enabled:disabled active:inactive online:offline available:unavailable
allowed:forbidden allowed:prohibited allowed:banned permitted:prohibited
permitted:forbidden included:excluded includes:excludes free:paid free:charged
increase:decrease increased:decreased increases:decreases rise:fall rose:fell
higher:lower raised:lowered gain:loss won:lost win:lose before:after minimum:maximum
earliest:latest required:optional mandatory:optional compulsory:optional
refundable:non-refundable passed:failed success:failure successful:unsuccessful
legal:illegal safe:unsafe valid:invalid valid:expired confirmed:cancelled
completed:pending completed:cancelled paid:unpaid arrived:departed morning:evening
north:south east:west inbound:outbound import:export buy:sell bought:sold
domestic:international public:private full-time:part-time weekday:weekend
upgrade:downgrade""".split()
ANTONYMS: dict[str, frozenset[str]] = {}
for _pair in _PAIRS:
    _a, _b = (s.stem(w) for w in _pair.split(":"))
    ANTONYMS[_a] = ANTONYMS.get(_a, frozenset()) | {_b}
    ANTONYMS[_b] = ANTONYMS.get(_b, frozenset()) | {_a}

UNIVERSAL = frozenset(
    "all every everyone everybody everything always each entire whatever whenever".split()
)
_WORD = re.compile(r"[a-z]+(?:'[a-z]+)?")


# Negation words that do not negate: "no later than five days", "not only".
IDIOMS = re.compile(r"\b(?:no|not) (?:later|more|less|fewer|sooner|earlier) than\b|\bnot only\b")


# Words between a negation and what it negates: "is not yet", "does not always".
_LINKS = frozenset(
    "be am is are was were been being do does did have has had will would can could should "
    "may might must shall a an the to yet any".split()
)


def _stems(text: str) -> frozenset[str]:
    return frozenset(s.tokens(text).words)


def antonym(clause_words: frozenset[str], sentence_words: frozenset[str]) -> bool:
    """The clause uses a word whose opposite the sentence uses instead."""
    for word in clause_words - sentence_words:
        opposite = ANTONYMS.get(word)
        if opposite and opposite & sentence_words and word not in sentence_words:
            return True
    return False


HEDGES = frozenset(
    "some most many usually often sometimes generally typically several certain few "
    "may can might".split()
)
# Universal quantifiers an answer over-reaches with; "each" and "entire" mostly
# distribute ("each system has its own role") rather than generalise.
OVERREACHING = frozenset("all every everyone everybody everything always".split())


def overreaches(clause: str, sentence: str) -> bool:
    """The clause says "all", "every" or "always" where the sentence says no universal
    and limits the same thing instead: a hedge ("most orders" against "all orders",
    "usually paid" against "always paid") or a name ("Flex fares" against "all
    fares"). The caller checks that the rest of the clause matches."""
    said = _WORD.findall(t.normalise(clause))
    heard = _WORD.findall(t.normalise(sentence))
    if not set(said) & OVERREACHING or set(heard) & UNIVERSAL:
        return False
    if _after(said, OVERREACHING) & _after(heard, HEDGES):
        return True
    claimed = s.tokens(clause)
    heads = _after(said, OVERREACHING, 3) - set(claimed.names)
    return any(head in heads and name not in claimed.words for name, head in _limited(sentence))


def _after(words: list[str], markers: frozenset[str], reach: int = 2) -> frozenset[str]:
    """Stems of the first ``reach`` content words after each marker, within four
    words: "all orders from" gives "order"; "always paid at" gives "paid"."""
    found: list[str] = []
    for at, word in enumerate(words):
        if word not in markers:
            continue
        stems: list[str] = []
        for after in words[at + 1 : at + 5]:
            stems.extend(s.tokens(after).words)
            if len(stems) >= reach:
                break
        found.extend(stems[:reach])
    return frozenset(found)


def _limited(sentence: str) -> list[tuple[str, str]]:
    """(name, head) where a name in ``sentence`` directly restricts the word after it:
    ("flex", "fare") for "Flex fares"."""
    found = s.tokens(sentence)
    names = set(found.names)
    words = found.words
    return [
        (w, words[i + 1])
        for i, w in enumerate(words[:-1])
        if w in names and words[i + 1] not in names
    ]


def best_clause(clause_words: frozenset[str], sentence: str, clauses: list[str]) -> str:
    """The clause of ``sentence`` that shares most words with the claim's clause."""
    if len(clauses) <= 1:
        return sentence
    return max(clauses, key=lambda c: len(clause_words & frozenset(s.tokens(c).words)))


# Words between a negation and the predicate it bears on: "there is no need to avoid",
# "do not have to register", "is no longer".
_NEGATION_LINKS = _LINKS | frozenset(
    "need needs needed have has had to longer necessarily necessary required".split()
)
# Negations of a predicate; "neither ... nor", "nobody" and "none" negate a subject.
_PREDICATE_NEGATIONS = frozenset({"not", "no", "never", "cannot"})
# Where a clause's subject ends: its first verb of being or having, modal or negation.
_SUBJECT_END = (_LINKS - {"a", "an", "the", "to", "yet", "any"}) | t.NEGATIONS
_PUNCTUATION = re.compile(r"[,;:.()\[\]\"!?-]+\s")


def negates(clause: str, sentence: str, subject: tuple[str, ...] = (), whole: str = "") -> bool:
    """Exactly one of ``clause`` and ``sentence`` negates a predicate the other asserts:
    the word a negation bears on ("is not backed up", "has no minimum deposit", "do not
    need to register") is said, unnegated, by the other side. ``subject`` are stems the
    clause's subject must share with the ``whole`` sentence (``sentence`` being its
    clause); one of two or more may be missing (the verb: "requires" against "has no").
    The caller checks that the rest of the clause matches."""
    said = IDIOMS.sub(" ", t.normalise(clause)).replace("n't", " not")
    heard = IDIOMS.sub(" ", t.normalise(sentence)).replace("n't", " not")
    said_scope = scopes(said)
    heard_scope = scopes(heard)
    if bool(said_scope) == bool(heard_scope):
        return False
    around = _stems(f"{heard} {t.normalise(whole)}")
    if len([w for w in subject if w not in around]) > (len(subject) >= 2):
        return False
    if set(s.tokens(clause).names) - around - _stems(sentence):
        return False  # "a Flex fare" against "Light fares do not ...": another subject
    found, other = (said_scope, heard) if said_scope else (heard_scope, said)
    return any(scope and set(scope) <= _plain_stems(other) for scope in found)


def _plain_stems(text: str) -> frozenset[str]:
    """Stems of every word but function words: generic ones ("available") included."""
    return frozenset(s.stem(w) for w in _WORD.findall(text) if w not in t.STOPWORDS)


def scopes(text: str) -> list[tuple[str, ...]]:
    """What each negation in ``text`` bears on: the stems of the (up to) two content
    words after it, within its stretch of punctuation ("if not, you need to" negates
    nothing said): the predicate and its object ("not work to dismantle")."""
    found: list[tuple[str, ...]] = []
    for stretch in _PUNCTUATION.split(text):
        words = _WORD.findall(stretch)
        for at, word in enumerate(words):
            if word not in _PREDICATE_NEGATIONS:
                continue
            scope: list[str] = []
            for after in words[at + 1 : at + 7]:
                if not scope and (after in _NEGATION_LINKS or after in t.NEGATIONS):
                    continue
                if after not in t.STOPWORDS:
                    scope.append(s.stem(after))
                if len(scope) >= 2:
                    break
            found.append(tuple(scope[:2]))
    if not found and set(_WORD.findall(text)) & t.NEGATIONS:
        found.append(())  # a negation of the subject ("nobody"): still a negated side
    return found


def subject(clause: str, before: str = "") -> tuple[str, ...]:
    """Stems of the clause's subject: its content words before its first verb of
    being or having, modal or negation; the previous clause's (``before``) when it
    has none."""
    for text in (clause, before):
        words = _WORD.findall(t.normalise(text).replace("n't", " not"))
        head: list[str] = []
        for word in words:
            if word in _SUBJECT_END:
                break
            head.append(word)
        stems = s.tokens(" ".join(head)).words
        if stems:
            return stems
    return ()


# A condition a sentence attaches to what it says: who or what it is for, when, unless.
_CONDITION = re.compile(
    r"\b(?:only (?:if|when|for|after|within)|unless|except(?: for)?|provided that|"
    r"as long as|on condition that|for (?:orders|purchases|items|customers|members|accounts|"
    r"users|subscribers) (?:over|above|under|below|of|with|from|in)|if you (?:are|have|hold))"
    r"\b(?:[^,.;:]|(?<=\d)[.:](?=\d)|(?<=\d),(?=\d{3})){2,80}",
    re.IGNORECASE,
)


def dropped_condition(claim: str, source: str) -> str | None:
    """The condition ``source`` attaches that ``claim`` leaves out (none of its content
    words in the claim); None when the source sets none, the claim keeps it, or the claim
    is too short to state a rule."""
    said = t.content_words(claim) | t.numbers(claim)
    if len(said) < 3:
        return None  # an answer of a word or two ("Panzer") names, it does not generalise
    for match in _CONDITION.finditer(source):
        words = t.content_words(match.group(0)) | t.numbers(match.group(0))
        if words and not words & said:
            return match.group(0).strip()
    return None
