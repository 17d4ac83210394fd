"""Deterministic text handling shared by judges: normalising, sentences, non-claims."""

from __future__ import annotations

import re
import unicodedata

_QUOTES = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"', "\u00a0": " "})
_SPACE = re.compile(r"\s+")
# A sentence ends at . ! ? followed by space and an upper-case letter, digit, quote or
# a scrubbed value ("<PERSON_...>"); "3.5", "e.g. the" and "v2.1" stay whole.
_SENTENCE_END = re.compile(r"(?<=[.!?])[\"')\]]?\s+(?=[A-Z0-9\"'(\[<])")
# A title's stop ends no sentence: "taught by Dr. Imani Okafor".
_TITLE_END = re.compile(r"\b(?:Dr|Mr|Ms|Mrs|St|Prof|Jr|Sr|No|Nr|vs|Fig|approx|e\.g|i\.e)\.$")
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

# A clause that says nothing of the world: greetings, thanks, courtesies, filler. Matched
# against a whole clause, so "Hilton guests ..." or "Thanks to the new plan, ..." are not.
_COURTESY = re.compile(
    r"(?:hi|hello|hey|greetings|dear [a-z<][^ ]*|good (?:morning|afternoon|evening|day))"
    r"(?: there| all| everyone| team| [a-z<][^ ]*)?|"
    r"(?:thanks|thank you|many thanks)(?: (?:so|very) much| a lot)?(?: for [^,;]*)?|"
    r"you(?:'re| are) (?:very |most )?welcome|"
    r"(?:(?:i|we)(?:'m|'re| am| are) )?(?:so |very |really )?sorry (?:to hear|about|for)\b[^,;]*|"
    r"(?:(?:i|we) )?apologi[sz]e(?: for [^,;]*)?|(?:that|this) (?:sounds|must be|is) "
    r"(?:so |very |really )?(?:frustrating|annoying|stressful|inconvenient)|"
    r"(?:happy|merry) (?:holidays|new year|christmas|easter|thanksgiving|birthday)|"
    r"season's greetings|(?:have|enjoy) (?:a |your )?(?:great|nice|good|lovely|wonderful|safe)? ?"
    r"(?:day|weekend|evening|trip|stay|journey|holiday|holidays|meal|flight)|take care|"
    r"(?:best|kind|warm) (?:regards|wishes)|cheers|all the best|good luck|"
    r"(?:(?:i|we)(?:'m|'re| am| are|'d be| would be|'ll be| will be) )?(?:glad|happy|pleased) "
    r"to help[^,;]*|(?:i |we )?hope (?:this|that) helps[^,;]*|(?:please )?(?:feel free to )?"
    r"(?:let (?:me|us) know|ask|reach out) if [^,;]*|is there anything else[^,;]*|"
    r"(?:sure|certainly|of course|okay|ok|absolutely|great|good question|great question|"
    r"(?:i'm |i am |we're |we are )?sorry|apologies|unfortunately|alas|well|in short|"
    r"in summary|to summari[sz]e|overall|however|additionally|therefore|moreover|furthermore|"
    r"also|in addition|thus|hence|besides|finally|lastly|in conclusion|in other words|"
    r"(?:please )?note|that said|as such|meanwhile|first(?:ly)?|second(?:ly)?)|"
    r"here(?: is|'s| are) (?:a |an |the )?(?:brief |short |quick )?(?:summary|overview|"
    r"answer|response|description|list)\b[^,;]*|"
    r"(?:based on|according to|from|given) (?:the |this |these )?(?:provided |given |above |"
    r"available |retrieved )?(?:passages?|context|information|documents?|sources?|texts?|"
    r"data)(?: alone| provided| given)?|"
    r"(?:passage|document|source|chunk)s? ?\d+|\(?(?:unavailable|none|missing|empty|n/a)\)?|"
    # What is left of "See [4]." or "Sources: [1][2]" once citation markers are cut.
    r"(?:see|see also|cf|source|sources|ref|refs|references?|citations?)(?: \[[^\]]*\])*",
)
# A whole sentence that answers "yes" or "no" and nothing else asserts nothing the
# context could hold (the question carries what it affirms).
_BARE = re.compile(r"(?:yes|no|sure|certainly|of course|okay|ok)")
# An abstention whose object follows it: "the passages do not mention X, Y, or Z".
_ABSTAIN = re.compile(
    r"\bi (?:do not|don't) know\b|\b(?:i'm|i am|we're|we are) not sure\b|"
    r"\b(?:i|we) (?:can ?not|can't|am unable to|was unable to|could not|couldn't|did not|"
    r"didn't) (?:find|answer|help|say|tell|see|locate|provide|give|offer)\b|"
    r"\b(?:passages?|context|documents?|texts?|articles?|sources?|data|information) "
    r"(?:do|does|did)(?: not|n't) (?:provide|mention|contain|include|say|specify|state|"
    r"give|offer|indicate)|\b(?:i|it) (?:am|'m|is) (?:unable|not able) to\b|"
    r"\bthere (?:is|are|'s) no (?:mention|information|details?)\b|"
    r"\b(?:i|we) (?:do not have|don't have|have no) (?:any )?(?:information|details|data)\b|"
    r"\b(?:unable|not able|not possible|impossible|difficult|hard) to (?:definitively |"
    r"accurately |precisely )?(?:provide|answer|give|determine|say|tell|know)\b|"
    r"\bwithout (?:further|more|additional|specific) (?:information|details|context)\b|"
    r"\b(?:there is|there's) no (?:definitive|clear|specific|direct) "
    r"(?:answer|solution|information)"
)
# An abstention whose subject comes before it: "outdoor seating, WiFi and parking are not
# specified".
_UNSTATED = re.compile(
    r"\b(?:is|are|was|were) not (?:specified|mentioned|listed|stated|given|known|described)\b|"
    r"\b(?:information|details|data)\b[^.]{0,80}\b(?:is|are) not (?:available|provided|"
    r"included|given)\b"
)
# Advice to ask someone else, as advice (at its clause's start, after "it may be best to",
# "you should", "please" ...): it asserts nothing about the sources. "... went back to
# seek help from the guards" is narrative, and a fact.
_REFERRAL = re.compile(
    r"(?:(?:it (?:may|might|would|could|is) (?:be )?(?:best|wise|necessary|advisable|"
    r"recommended|a good idea) to|(?:you|they) (?:may|might|should|could|can|must|will)"
    r"(?: also)?(?: need to| want to| have to)?|(?:we |i )?(?:recommend|suggest|advise)"
    r"(?: you| that you)?(?: to)?|please|always|be sure to|make sure to|consider|"
    r"(?:it is|it's) (?:always )?(?:best|wise) to) )*"
    r"(?:consult|seek|contact|see|ask|speak to|talk to|call|visit)(?: with)? (?:a |an |the |"
    r"your )?(?:local |qualified |licensed |medical |healthcare |professional |further |"
    r"expert |other |additional |more )?(?:professional|expert|specialist|doctor|physician|"
    r"pharmacist|technician|advisor|adviser|help|assistance|guidance|advice|resources|"
    r"sources|locksmith|carpenter|plumber|electrician|mechanic|lawyer|attorney|vet|"
    r"veterinarian)s?\b"
)
# A clause that opens with these depends on the clause after it ("If it persists, see a
# doctor"): when that one is left out, so is the condition.
_LEAD_IN = re.compile(
    r"(?:if|unless|when|whenever|in case|should|despite|although|though|while|since|"
    r"because|given|as long as|therefore,? if)\b"
)
# A clause after an abstention that opens with these is a new statement, not its object.
_CONNECTIVE = re.compile(
    r"(?:so|but|however|yet|although|though|whereas|while|therefore|thus|hence|which|"
    r"because|since|as a result|instead|otherwise|meanwhile)\b"
)
_MARKERS = re.compile(r"\[\d+(?:[,\s-]+\d+)*\]")
# Where a sentence divides into clauses that can each be left out: commas, semicolons,
# colons, dashes and the conjunctions that join a piece of advice to a fact.
_CLAUSE_BREAK = re.compile(r"(\s*[,;:]\s+|\s+(?:-|\u2013|\u2014)\s+|\s+(?:and|but)\s+)")
_HARD_BREAK = re.compile(r"\s*[;:]\s+|\s+but\s+")


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
            for piece in (s.strip() for s in _SENTENCE_END.split(line)):
                if found and _TITLE_END.search(found[-1]) and piece:
                    found[-1] = f"{found[-1]} {piece}"
                elif piece:
                    found.append(piece)
    return found


def _says_nothing(clause: str) -> bool:
    """A clause with no factual content: a courtesy or filler, or advice to ask someone
    else that names no value (advice with a number is judged, as any fact)."""
    norm = _MARKERS.sub("", normalise(clause)).strip(" .!,;:")
    if not _WORD.search(norm) or _COURTESY.fullmatch(norm):
        return True
    return bool(_REFERRAL.match(norm)) and not _NUMBER.search(norm)


def claim_part(sentence: str) -> str:
    """The sentence less its clauses of no factual content ("Sorry, refunds take 5
    days." → "refunds take 5 days."); '' when nothing else is left.

    An abstention's object may run over commas and "and" ("the passages do not say how
    Vietnam and India differ in culture, economy, or schools"): the clauses after one
    belong to it until one opens with a connective ("so", "but", "which" ...); one of
    the "X and Y are not specified" kind takes the clauses before it back to the last
    semicolon, colon or "but". Advice takes what it joins with "and". A condition or
    concession ("If it persists, ...", "Despite ...") goes with the clause it leads
    into. A leading "yes" or "no" stays: it is the claim's polarity.
    """
    pieces = _CLAUSE_BREAK.split(sentence.strip())
    clauses = pieces[0::2]
    joints = ["", *pieces[1::2]]
    drop = [False] * len(clauses)
    scope = ""  # what the last dropped clause still owns: "abstain", "advice" or ""
    for n, clause in enumerate(clauses):
        norm = normalise(clause)
        joint = joints[n].strip()
        if scope == "abstain" and not (joint == "but" or _CONNECTIVE.match(norm)):
            drop[n] = True
            continue
        if scope == "advice" and joint == "and" and not _NUMBER.search(norm):
            drop[n] = True
            continue
        scope = ""
        if _ABSTAIN.search(norm):
            drop[n], scope = True, "abstain"
        elif _UNSTATED.search(norm):
            drop[n] = True
            back = n
            while back > 0 and not _HARD_BREAK.fullmatch(joints[back]):
                if _CONNECTIVE.match(normalise(clauses[back])):
                    break
                back -= 1
                drop[back] = True
        elif _says_nothing(clause):
            bare = n == 0 and _BARE.fullmatch(norm.strip(" .!"))
            drop[n] = not bare
            scope = "advice" if _REFERRAL.match(norm) else ""
    # A lead-in goes with the clause it leads into (back over filler before it).
    for n in range(len(clauses) - 2, -1, -1):
        if not drop[n] and drop[n + 1] and _LEAD_IN.match(normalise(clauses[n])):
            drop[n] = True
    kept: list[str] = []
    for n, clause in enumerate(clauses):
        if not drop[n]:
            kept.extend([joints[n], clause] if kept else [clause])
    if all(_BARE.fullmatch(normalise(k).strip(" .!,")) for k in kept[::2]):
        return ""
    return "".join(kept)


def is_non_claim(sentence: str) -> bool:
    """Questions, intros ("Here is a summary:"), and sentences whose every clause is a
    greeting, thanks, abstention or referral. Matching is on whole clauses and words:
    a sentence that pairs such a phrase with a fact is a claim about the fact."""
    norm = normalise(sentence)
    return norm.endswith(("?", ":")) or not claim_part(sentence)


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


def says_something(text: str) -> bool:
    """Whether the text carries a content word or a number: "Of the." or "It." does not,
    and no chunk can be evidence for it."""
    return bool(content_words(text) or numbers(text))


def holds_phrase(text: str, phrase: str) -> bool:
    """Whether normalised ``text`` holds normalised ``phrase`` as whole words ("it" is not
    in "capital") and the phrase says something (:func:`says_something`)."""
    if not phrase or not says_something(phrase):
        return False
    start = text.find(phrase)
    while start >= 0:
        end = start + len(phrase)
        before = text[start - 1] if start else " "
        after = text[end] if end < len(text) else " "
        if not before.isalnum() and not after.isalnum():
            return True
        start = text.find(phrase, start + 1)
    return False


def strip_end(text: str) -> str:
    return text.rstrip(" .!?;:")


def abstains(text: str) -> bool:
    """Whether a sentence of ``text`` declines to answer ("I could not find ...", "the
    passages do not mention ...", "X is not specified"), as ``claim_part`` drops it."""
    return any(
        _ABSTAIN.search(normalise(s)) or _UNSTATED.search(normalise(s)) for s in sentences(text)
    )
