"""Deterministic text handling shared by judges: normalising, sentences, non-claims."""

from __future__ import annotations

import re
import unicodedata

_QUOTES = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"', "\u00a0": " "})
_SPACE = re.compile(r"\s+")
# A sentence ends at . ! ? followed by space and an upper-case letter, digit, quote or
# a scrubbed value ("<PERSON_...>"); "3.5", "e.g. the" and "v2.1" stay whole.
_SENTENCE_END = re.compile(r"(?<=[.!?])[\"')\]]?\s+(?=[A-Z0-9\"'(\[<])")
_LIST_MARK = re.compile(r"^(?:\d{1,2}[.)]|[-*•])\s+")
_WORD = re.compile(r"[a-z0-9]+(?:[.,:/-][a-z0-9]+)*")
_NUMBER = re.compile(r"\d")

STOPWORDS = frozenset(
    """a an the and or but if then than so of to in on at by for with from into onto about as
    is are was were be been being am do does did has have had it its it's this that these those
    there here which who whom whose what when where why how i you he she we they me him her us
    them my your his our their can could would should will shall may might must also just very
    any some all each other such only own same too more most""".split()
)
NEGATIONS = frozenset(
    {"not", "no", "never", "none", "nobody", "nothing", "neither", "nor", "cannot"}
)

_NON_CLAIM = re.compile(
    r"^(?:hi|hello|hey|thanks|thank you|you're welcome|you are welcome|glad to help|"
    r"happy to help|i hope this helps|hope this helps|let me know if|is there anything else|"
    r"i (?:do not|don't) know|i'm not sure|i am not sure|i (?:can ?not|can't|am unable to|"
    r"was unable to|could not|couldn't|did not|didn't) (?:find|answer|help|say|tell|see|locate)|"
    r"(?:yes|no|good question|great question)[!.,]*$|sorry|unfortunately,? i|"
    r"(?:the|this) (?:context|information) (?:does not|doesn't) (?:say|mention|contain)|"
    r"(?:sure|certainly|of course|okay|ok)[!.,]*$|here(?: is|'s| are) (?:a |an |the )?"
    r"(?:summary|overview|answer|response|description|list)\b|"
    # What is left of "See [4]." or "Sources: [1][2]" once citation markers are cut.
    r"(?:see|see also|cf|source|sources|ref|refs|references?|citations?)[.:!]*$)",
)
# An abstention anywhere in a sentence: "..., the passages do not mention X".
_ABSTAIN = re.compile(
    r"\b(?:passages?|context|documents?|texts?|articles?|sources?|data|information) "
    r"(?:do|does|did)(?: not|n't) (?:provide|mention|contain|include|say|specify|state|"
    r"give|offer|indicate)|\bi (?:am|'m) (?:unable|not able) to\b|"
    r"\bthere (?:is|are) no (?:mention|information|details?)\b|"
    r"\b(?:is|are|was|were) not (?:specified|mentioned|listed|stated|given|known)\b|"
    r"\b(?:unable|not able|not possible|impossible|cannot|can't|can not) to (?:provide|answer|give|"
    r"determine|say)\b|\b(?:i|we) (?:cannot|can't|can not) (?:provide|give|offer)\b|"
    r"\b(?:passage|document|source)s? \d+: \(?(?:unavailable|none|missing|empty)\b|"
    r"\b(?:information|details|data) (?:about|on|regarding|for) [^.]{0,80}\b(?:is|are) not "
    r"(?:available|provided|included|given)\b|"
    r"\bwithout (?:further|more|additional|specific) (?:information|details|context)\b|"
    r"\b(?:there is|there's) no (?:definitive|clear|specific|direct) "
    r"(?:answer|solution|information)"
)
# Boilerplate advice to look elsewhere: it asserts nothing about the sources.
_REFERRAL = re.compile(
    r"\b(?:consult|seek|contact|see|ask)(?: with)? (?:a |an |the |your )?(?:local |qualified |"
    r"licensed |medical |healthcare )?(?:professional|expert|specialist|doctor|physician|"
    r"technician|advisor|adviser)s?\b|\bseek (?:further |professional |expert |medical )?"
    r"(?:help|assistance|guidance|advice)\b|\bconsult (?:further|other|additional|more) "
    r"(?:resources|sources)\b|^(?:sure|certainly|of course|absolutely)[!.,]? (?:i'd|i would|"
    r"i'll|i will|i can|i am|i'm) (?:be )?(?:happy|glad)"
)


# Text addressed to the assistant, not facts: a chunk sentence like this supports nothing.
_INSTRUCTION = re.compile(
    r"\b(?:ignore|disregard|forget) (?:all |any |the )?(?:previous|prior|above|earlier|other)"
    r" (?:instructions?|prompts?|messages?|context)\b|^(?:please )?(?:tell|inform|assure|"
    r"reassure|say to|let) (?:the |this )?(?:customer|user|caller|patient|client|reader)s?\b|"
    r"^(?:(?:you|the assistant|assistant|ai|the ai|the model|chatbot) (?:must|should|"
    r"will|shall)|as an ai|system:|assistant:|respond (?:with|that|only)|answer (?:with|that|"
    r"only)|always (?:say|answer|tell|respond)|do not (?:mention|reveal|tell))\b",
)


def is_instruction(sentence: str) -> bool:
    """A sentence that instructs the assistant ("ignore previous instructions ...")."""
    return bool(_INSTRUCTION.search(normalise(sentence)))


def without_instructions(chunk: str) -> str:
    """The chunk with its instruction sentences blanked (same for a chunk without)."""
    if not _INSTRUCTION.search(normalise(chunk)):
        return chunk
    return " ".join(s for s in sentences(chunk) if not is_instruction(s))


def normalise(text: str) -> str:
    """NFKC, straight quotes, lower case, single spaces."""
    text = unicodedata.normalize("NFKC", text).translate(_QUOTES).lower()
    return _SPACE.sub(" ", text).strip()


def sentences(text: str) -> list[str]:
    """Sentences, split at end punctuation and at line breaks (lists, headings)."""
    found: list[str] = []
    for line in text.splitlines():
        line = _LIST_MARK.sub("", _SPACE.sub(" ", line).strip())
        if line:
            found.extend(s.strip() for s in _SENTENCE_END.split(line) if s.strip())
    return found


def is_non_claim(sentence: str) -> bool:
    """Greetings, abstentions, refusals, questions and intros ("Here is a summary:")."""
    norm = normalise(sentence)
    return (
        norm.endswith(("?", ":"))
        or bool(_NON_CLAIM.match(norm))
        or bool(_ABSTAIN.search(norm))
        or bool(_REFERRAL.search(norm))
        or not _WORD.search(norm)
    )


def _stem(word: str) -> str:
    for suffix in ("ing", "ed", "es", "s"):
        if len(word) > len(suffix) + 3 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


def content_words(text: str) -> set[str]:
    words = _WORD.findall(normalise(text))
    return {_stem(w) for w in words if w not in STOPWORDS and not _NUMBER.search(w)}


def numbers(text: str) -> set[str]:
    return {w for w in _WORD.findall(normalise(text)) if _NUMBER.search(w)}


def negated(text: str) -> bool:
    words = set(_WORD.findall(normalise(text).replace("n't", " not")))
    return bool(words & NEGATIONS)


def strip_end(text: str) -> str:
    return text.rstrip(" .!?;:")
