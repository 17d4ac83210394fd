"""How the offline judge reads an answer sentence before judging it.

It judges the clauses that state a fact (``text.claim_part``), without markup (bold,
code marks, headings, table pipes, formatting tags), and reads an answer too short to state
a fact alone with its question: "15" to "How many projects can I have on the Cobalt
plan?" claims that the Cobalt plan allows 15 projects, "Heron." to "Which team handles
billing escalations?" that Heron handles them, and a bare "No." to "Is checked baggage
included with a Flex fare?" that it is not. Markup and single tokens are thus never
evidence of themselves: the question's subject must stand with them in the context.
"""

from __future__ import annotations

import re
from dataclasses import replace

from ..model import Claim, claim_supported
from ..model.judgement import UNVERIFIED
from . import support as s
from . import text as t
from .values import DIMENSIONS, values

# An answer of at most this many content words and numbers is read with its question.
SHORT = 3

# Formatting tags only: any other markup (a script, an image) is content, judged and
# quoted as it stands.
_TAG = re.compile(
    r"</?(?:b|i|u|em|strong|code|span|p|br|li|ul|ol|h[1-6]|td|tr|th|table|small|mark)\b[^>]*>",
    re.IGNORECASE,
)
_MARKS = re.compile(r"\*\*|__|`|^\s*#{1,6}\s*|\s*\|\s*", re.MULTILINE)
_ASKING = re.compile(
    r"^(?:(?:what|which|who|whom|whose|when|where|why|how(?: much| many| long| often| far)?"
    r"|is|are|am|was|were|do|does|did|can|could|will|would|should|shall|may|might|must"
    r"|has|have|had|'s)\b[\s,]*)+",
    re.IGNORECASE,
)
_BARE = re.compile(r"\s*(yes|no)\b[\s.!]*", re.IGNORECASE)
# A yes/no question whose subject is a pronoun: its verb moves after it.
_PRONOUN_ASKING = re.compile(
    r"^(am|is|are|was|were|do|does|did|can|could|will|would|should|shall|may|might|must)"
    r"\s+(i|you|we|they|it|he|she)\b",
    re.IGNORECASE,
)
_DO = frozenset({"do", "does", "did"})


def unmarked(text: str) -> str:
    """``text`` without markup: "**Price:** $30" → "Price: $30"."""
    return _SPACES.sub(" ", _MARKS.sub(" ", _TAG.sub(" ", text))).strip()


_SPACES = re.compile(r"\s{2,}")
_HEADING = re.compile(r"^\s*#{1,6}\s+(.+)$", re.MULTILINE)
# "How many projects ...": what a bare number answering it counts.
_COUNTED = re.compile(r"\bhow many ([a-z]+)", re.IGNORECASE)
_NUMBER = re.compile(r"[\d.,]+")
# A verb that makes a short answer a sentence of its own.
_VERB = re.compile(
    r"\b(?:is|are|was|were|be|been|has|have|had|will|can|cannot|does|did|do|[a-z]{3,}ed)\b",
    re.IGNORECASE,
)
# "Price: $30", "Max per 24 h: 6 tablets": a label naming what the value is.
_LABEL = re.compile(r"^[^:.]{1,40}:\s+(?=\S)")


def claims(answer: str, question: str) -> list[str]:
    """The answer's sentences that state a fact; a bare "yes" or "no" to a question
    states the question's fact (or its denial). A markdown heading is a label."""
    headings = {m.group(1).strip() for m in _HEADING.finditer(answer)}
    found = [
        s for s in t.sentences(answer) if unmarked(s) not in headings and not t.is_non_claim(s)
    ]
    if not found and question.strip() and _BARE.fullmatch(answer):
        return [answer.strip()]
    return found


def judged(sentence: str, question: str) -> str:
    """What of ``sentence`` is judged: its factual clauses without markup, with the
    question's words when they are too few to state a fact alone."""
    if _BARE.fullmatch(sentence) and question.strip():
        return _asked(question)  # "no" denies it: ``answered`` turns the verdict
    part = unmarked(t.claim_part(sentence))
    value = _LABEL.sub("", part)
    if value != part and len(s.tokens(value).words) <= SHORT:
        part = value  # "Price: $30": the label names what is asked, the value answers
    counted = _COUNTED.search(question)
    if counted and _NUMBER.fullmatch(part):
        return f"{part} {counted.group(1)}"  # "15" to "How many projects ...?"
    return part


def answered(claim: Claim, question: str) -> Claim:
    """``claim`` as its sentence answers. A bare "no" denies the question's statement:
    the statement contradicted is the answer supported; one the words of the context
    hold does not prove the denial false (a comparison, a "both"), so the answer is
    unsupported, for the LLM stage or a reviewer to settle."""
    bare = _BARE.fullmatch(claim.text)
    if not (bare and question.strip()):
        return claim
    # Words do not verify a statement made of the question's words: the cascade asks.
    if bare.group(1).lower() == "yes":
        verified = not claim_supported(claim.verdict)
        return claim if verified else replace(claim, flags=(*claim.flags, UNVERIFIED))
    if claim.verdict == "contradicted":
        return replace(claim, verdict="supported", flags=(*claim.flags, UNVERIFIED))
    return replace(claim, verdict="unsupported", chunk=None, quote=None, confidence=DENIAL)


# How often a bare "no" the offline judge cannot verify is right: unknown, so uncertain.
DENIAL = 0.5


def asked(sentence: str, question: str) -> str:
    """The question's statement when ``sentence`` is too short to state a fact alone
    ("15" to "How many projects on the Cobalt plan?"): its subject is the answer's.
    '' for a longer answer, or a bare "yes" or "no" (the statement is then judged)."""
    if not question.strip() or _BARE.fullmatch(sentence):
        return ""
    value = _LABEL.sub("", judged(sentence, question))
    found = s.tokens(value)
    units = {  # "250 mg/5 mL" is two values, not four words
        s.stem(w) for w in _AFTER_NUMBER.findall(value.lower()) if _is_unit(w)
    } & set(found.words)
    if len(found.words) - len(units) + len(found.numbers) > SHORT or _VERB.search(value):
        return ""  # "Order A17 was cancelled." states its fact alone
    return _asked(question)


# The word right after a number: its unit, if it measures.
_AFTER_NUMBER = re.compile(r"\d\s?([a-z]+)")


def _is_unit(word: str) -> bool:
    """A word that measures the number before it ("mg", "ml", "km"), a currency or a
    dimension, not a counted thing."""
    return any(v.unit in DIMENSIONS for v in values(f"1 {word}"))


def _asked(question: str) -> str:
    """The question's statement: "Is checked baggage included?" → "checked baggage
    included"; with a pronoun its verb stays, so what it grants or denies is read:
    "Can I bring my dog?" → "I can bring my dog", "Do I need a visa?" → "I need a visa"."""
    asked = unmarked(question).strip().rstrip("?").strip()
    asked = _PRONOUN_ASKING.sub(
        lambda m: m.group(2) if m.group(1).lower() in _DO else f"{m.group(2)} {m.group(1).lower()}",
        asked,
    )
    return _ASKING.sub("", asked) or question
