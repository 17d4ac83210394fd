"""PERSON names without a model: a hand-kept first-name list plus context rules. A name is:

- a known first name, any case, then up to three capitalised surname tokens (``O'Neill``,
  ``Álvarez``, ``van der Berg``) or a known lower-case surname (``hi its john smith``);
  a capitalised first name that is not also a common word stands alone too;
- a title (``Dr.``, ``Ms``, ``Prof.``) then capitalised words; ``Kowalski, Anna``;
- the word after a greeting (``hi``, ``dear``, ``thanks``) or the line after a sign-off;
- the next member of a list (``Priya Shah and Tom Weber``) whose first member is a name;
- a JSON or ``key=value`` field whose key names a person (``"customer_name": "..."``).

First names that are also common words (``will``, ``may``) need a surname after them or a
greeting before them; a name before a street or business word (``Victoria Street``) is a
place; a word touching ``@ . / _`` is part of an e-mail address, URL or identifier. The
pseudonym's value drops the title and folds case: "Dr. Priya Shah" ~ "priya shah".

A hand-kept list, not a package: ``gender-guesser`` (61k names, 6-22 MB) is GPLv3/GFDL and
full of common words; ``names-dataset`` is a 56 MB wheel needing 3.2 GB of memory.
"""

from __future__ import annotations

import re
from functools import lru_cache

from .detectors_common import Found

KIND = "PERSON"

_FIRST = """
aaron abdul abigail adam adrian ahmed aisha alan albert alberto alejandro aleksandra alex
alexander alexandra alexis alfie ali alice alicia alison amanda amelia amir amit amy ana anders
andrea andreas andrew andrés andy angela angelo anita ann anna anne annemarie anne-marie annette
anthony antoine anton antonio anya arjun arnaud arthur asha ashley astrid aurélie ava barbara
beatriz ben benjamin bernard beth bianca bjorn björn blake bogdan brandon brenda brian bruno
bryan camila camille carl carla carlos carmen carol caroline carolyn catherine cecilia céline
charles charlie charlotte chen cheryl chloe chris christian christina christine christopher
claire clara claudia colin connor cristina daan dan daniel daniela danielle david debbie deborah
deepak denise dennis derek diana diego dimitri dmitri dominic donald donna doris dorothy douglas
edward eleanor elena eli elif elijah elisa elisabeth elizabeth ella ellen emily emma emre
enrique eric erik erin ethan eva evelyn fabian fatima federica felipe felix fernando finn fiona
florian francesca francesco francisco françois frédéric gabriel gabriela gareth gary george
georg gérard gianluca giorgio giovanni giulia giuseppe gloria gonzalo gordon graham greg gregory
guillaume gustavo hana hannah hans harold harry heather hector héctor heidi helen helena henrik
henry hiroshi hugo ian ibrahim ines inés ingrid irene isaac isabel isabella isabelle ivan jacob
jacqueline jake james jane janet janice jasmine jason javier jean jeffrey jennifer jenny jeremy
jessica joan joanna joaquín joe joel johan johann johannes john jonas jonathan jordi jorge josé
joseph josh joshua juan judith julian julie julien julio justin kai karen karin karl kate
katherine kathleen kathryn katie kayla keith kelly kenji kenneth kevin kim klaus kyle lara
larissa laura lauren laurent leah lena leo leon leonardo liam linda lisa lorenzo louis louise
lucas lucía lucia luis luisa luka lukas luke maciej magdalena manuel marc marcel marco marcus
margaret maria marie marina mario marion marisol marta martha martin mary matteo matthew
matthias maurice max maxime megan mehmet melissa mia michael michaela michel michelle miguel
mikael mike miriam mohammed mohamed monica nadia nancy naomi natalia natasha nathan nicholas
nicola nicolas nicole niels nikhil nikolai nina noah noémie nora oliver olivia omar oscar pablo
paolo patricia patrick paul paula pedro peter philip philippe pierre pieter pooja priya rachel
rafael rahul raj rajesh ramón raquel raul raúl rebecca ricardo richard rob robert roberto robin
roger ronald rosa ruth ryan sabine sam samantha samuel sandra sanjay sara sarah sean sebastian
sergio sharon simon sofia sofía sophie stefan stefano stephanie stephen steve steven susan sven
svetlana tanya teresa thomas tim timothy tobias tom tomás tomasz tony ursula valentina valeria
vanessa vera victor vikram vincent virginie jürgen katharina kristýna olamide tereza jana petra
lucie zuzana jiří tomáš dagmar uwe dieter günter wolfgang sabrina wei wendy william xavier
yasmin yuki yusuf zoe zoé zainab zhang lars lotte sanne thijs jeroen wouter bram femke anouk
esther ruben kofi amara chidi ngozi oluwaseun aditi ananya kavya rohan vivek
"""

# First names that are also everyday words or places: need a surname or a greeting.
_COMMON = """
will may grace rose mark bill hope joy faith june april august summer amber sunny art dawn jack
pat sue guy frank rich ray gene lily iris violet ruby jade pearl holly ivy chase hunter drew
lane dean herb rod don sky river sage paige page victoria jordan georgia virginia austin dallas
florence paris chelsea sydney madison lincoln jackson brooklyn carter miles wade penny sandy
rusty bob nick bella angel star autumn crystal jan max milan julia hugo oscar destiny harmony
heaven honey ginger cliff glen glenn heath jay ken lee les norm
"""

_SURNAMES = """
smith johnson williams brown jones garcia miller davis rodriguez martinez hernandez lopez
gonzalez wilson anderson thomas taylor moore martin jackson thompson white harris clark lewis
robinson walker young allen king wright scott green baker adams nelson hill campbell mitchell
roberts carter phillips evans turner torres parker collins edwards stewart morris murphy cook
rogers morgan cooper peterson reed bailey bell kelly howard ward cox richardson wood watson
brooks bennett gray james hughes price sanders patel shah kumar singh sharma gupta nair reddy
khan ali chen wang li zhang liu yang huang wu zhou kim lee park nguyen tran müller mueller
schmidt schneider fischer weber meyer wagner becker schulz hoffmann koch richter klein wolf
neumann schwarz rossi russo ferrari esposito bianchi romano colombo ricci marino bruno dubois
durand leroy moreau simon laurent lefebvre michel bernard petit fernandez sanchez perez gomez
diaz alvarez álvarez romero ruiz navarro jimenez jiménez moreno muñoz silva santos oliveira
costa pereira de jong jansen bakker visser smit meijer bos mulder dijkstra kowalski nowak
wiśniewski o'neill o'brien kennedy doyle roe doe hardy nakamura tanaka suzuki sato ivanov petrov
novak horvat yilmaz kaya demir andersson johansson larsson nielsen hansen jensen olsen
"""

# Surnames that are also everyday words: never enough after a lower-case first name.
_WORDLIKE_SURNAMES = frozenset(
    """
cook wood green white young king hill brown park bell price ward gray reed baker turner hardy
cooper walker wright scott martin james thomas simon bernard michel bruno costa silva santos lee
kim li wolf klein koch bos smit petit moore rogers morgan bailey cox brooks parker carter hughes
bennett howard sanders allen evans
""".split()
)

_TITLE = r"(?:Dr|Mr|Mrs|Ms|Mx|Miss|Prof|Sir|Dame|Herr|Frau|Mme|Mlle|Sr|Sra|Dott|Sig|Ing|Mevr|Rev)"
_WORD = r"[^\W\d_](?:[^\W\d_]|['’\-](?=[^\W\d_]))*\.?"
_TOKEN = re.compile(_WORD)
_TITLE_RE = re.compile(
    rf"\b{_TITLE}\.?\s+(?:(?:med|phil|jur|rer\.\s?nat|h\.\s?c)\.\s+)?(?=[^\W\d_])"
)
# "Kowalski, Anna": a known surname, a comma, a known first name.
_INVERTED = re.compile(r"\b([^\W\d_][\w'’-]{1,30}),[ \t]+([^\W\d_][\w'’-]{1,30})\b")
_GREETING = re.compile(
    r"(?i)\b(?:hi|hello|hey|dear|thanks|thank\s+you|thx|cheers|greetings|good\s+(?:morning|"
    r"afternoon|evening)|bonjour|hallo|hola|ciao|salut|my\s+name\s+is|name\s+is|signed|"
    r"attn|c/o)[ \t]*[,:!]?[ \t]+(?:it's[ \t]+|its[ \t]+|this[ \t]+is[ \t]+|me,?[ \t]+)?"
)
_CLAUSE_END = re.compile(r"[ \t]*(?:[,.!?;)\n\r\"']|$)")
# Weaker cues: only a known first name after them.
_INTRO = re.compile(r"(?i)\b(?:this\s+is|i\s+am|i'm|im|it's|its|ask\s+for|speak\s+to)\s+")
_SIGNOFF = re.compile(
    r"(?im)^[ \t]*(?:(?:kind|best|warm|many)\s+(?:regards|wishes|thanks)|regards|best|cheers|"
    r"thanks|thank\s+you|sincerely|yours(?:\s+(?:truly|sincerely))?|br|cordialement|"
    r"saludos|grüße|mit\s+freundlichen\s+grüßen|groeten|a\s+presto)[ \t]*[,!.]?[ \t]*\r?\n[ \t]*"
)
_KEY_CUES = "name user agent contact customer assignee requester recipient sender owner".split()
_KEYED = re.compile(
    rf"""(?i)["']?\b([\w.-]{{0,24}}(?:{"|".join(_KEY_CUES)})[\w.-]{{0,12}})["']?"""
    r"""\s*[:=]\s*(?:"([^"\\\n]{1,80})"|'([^'\\\n]{1,80})'|([^\W\d_][^,;\n"'}\]&|<>]{0,60}))"""
)
_NOT_PERSON_KEY = re.compile(
    r"(?i)product|file|compan|org|store|branch|host|service|model|tool|event|span|app|plan|street|"
    r"city|field|table|queue|key|tag|type|kind|status|route|tenant|region|country|item|sku|brand|"
    r"team|group|role|domain|class|func|module|metric|attr|label|env|db|node|project|repo|server|"
    r"device|browser|version|id$|_id|user_agent|useragent|auth|token|secret|passw|cookie|session"
)
_LIST_JOIN = re.compile(r"(?:\s*,\s*(?:and\s+|or\s+)?|\s+(?:and|or|&|und|et|y|e|en)\s+)")
# Words after a capitalised first name that make the phrase a place, business or thing.
_PLACE_WORDS = frozenset(
    """
street st st. road rd rd. avenue ave ave. boulevard blvd lane ln drive dr dr. court ct way place
pl square sq park plaza mall station airport bridge hall house tower centre center hospital
clinic university college school academy institute museum library church cathedral store shop
market bank branch hotel inn cafe café restaurant bar pub bakery pharmacy gallery theatre
theater stadium arena inc inc. ltd ltd. llc gmbh corp co co. company group foundation trust fund
airlines air airways motors labs studio studios pro max plus mini ultra edition premium cloud
app apps os series model kit county city town valley beach island river lake mountain hills
heights estates cottage farm lodge manor barn villa mill grange rectory vicarage mansions
buildings
""".split()
)
_STOP = frozenset(
    """
i a an the and or but if of to in on at for from with by as is are was were be been am my team all
everyone there again so very much lot you your yours we our us they them he she it this that
these those customer customers sir madam support guys folks friend friends world advance sorry
please ok okay yes no hello hi hey thanks thank dear regards best cheers morning afternoon
evening just also here today tomorrow soon monday tuesday wednesday thursday friday saturday
sunday january february march april may june july august september october november december
order invoice ticket account refund payment card phone email address number help admin user
agent bot assistant service manager sales billing customer's not will can could would should
shall might must have has had do does did got get
""".split()
)
_ORG_AFTER = frozenset("support team sales service care desk billing helpdesk crew staff".split())
_PARTICLES = frozenset(
    "van von der den de da di del della des du la le dos das bin ben al el ter ten mac".split()
)


@lru_cache(maxsize=1)
def _lists() -> tuple[frozenset[str], frozenset[str], frozenset[str]]:
    """The first-name, common-word-name and surname sets, built once on first use."""
    common = frozenset(_COMMON.split())
    return frozenset(_FIRST.split()) | common, common, frozenset(_SURNAMES.split())


def _fold(word: str) -> str:
    return word.rstrip(".").replace("’", "'").casefold()


def _known_first(folded: str) -> bool:
    """A known first name, or a hyphenated one whose first part is ("hans-jürgen")."""
    first = _lists()[0]
    return folded in first or ("-" in folded and folded.split("-", 1)[0] in first)


def _surname_like(folded: str) -> bool:
    """A lower-case word that can only be a surname: known, or O'/Mc/D' prefixed."""
    known = folded in _lists()[2] or bool(re.match(r"(?:o'|d'|mc)[^\W\d_]{2}", folded))
    return known and folded not in _WORDLIKE_SURNAMES


def _touches_identifier(text: str, start: int, end: int) -> bool:
    """The word is part of an e-mail address, URL, path, handle or identifier."""
    if text[end - 1] == ".":
        end -= 1
    before = text[start - 1] if start else " "
    after = text[end : end + 2]
    if before.isalnum() or before in "@./_\\:#<-+%&":
        return True
    return bool(after) and (
        after[0] in "@_/\\<>" or after[0].isalnum() or (after[0] in ".-" and after[1:].isalnum())
    )


def _capitalised(word: str) -> bool:
    return word[0].isupper() and not (len(word) > 1 and word.rstrip(".").isupper())


def _surnames(text: str, pos: int, lower_ok: bool, limit: int = 3) -> tuple[int, bool] | None:
    """The end of the surname tokens starting at ``pos``; None if a place word follows.

    The flag says whether a surname was found at all. ``lower_ok``: a lower-case known
    surname counts (the first name was in lower case too).
    """
    end, found, taken = pos, False, 0
    cursor = pos
    while taken < limit:
        gap = re.match(r"[ \t]{1,3}", text[cursor:])
        if not gap:
            break
        match = _TOKEN.match(text, cursor + gap.end())
        if not match or _touches_identifier(text, match.start(), match.end()):
            break
        word = match.group()
        folded = _fold(word)
        if folded in _PARTICLES and taken < limit - 1:
            cursor = match.end()
            continue
        if _capitalised(word) and folded in _PLACE_WORDS:
            return None
        if folded in _STOP:
            break
        if not (_capitalised(word) or (lower_ok and _surname_like(folded))):
            break
        end = match.end() - (1 if word.endswith(".") else 0)
        found, taken, cursor = True, taken + 1, match.end()
    return end, found


def _after_first_name(text: str) -> list[tuple[int, int]]:
    common = _lists()[1]
    spans = []
    for match in _TOKEN.finditer(text):
        word = match.group().rstrip(".")
        folded = _fold(word)
        if not _known_first(folded) or _touches_identifier(text, match.start(), match.end()):
            continue
        start, word_end = match.start(), match.start() + len(word)
        rest = _surnames(text, word_end, lower_ok=True)
        if rest is None:
            continue
        end, has_surname = rest
        after = _TOKEN.match(text, word_end + 1)
        lower_next = after is not None and _surname_like(_fold(after.group()))
        if has_surname and (_capitalised(word) or lower_next):
            spans.append((start, end))
        elif not has_surname and _capitalised(word) and folded not in common:
            spans.append((start, word_end))
    return spans


def _name_at(
    text: str, pos: int, known_only: bool = False, keyed: bool = False
) -> tuple[int, int] | None:
    """A name starting at ``pos``: a capitalised word, or a known first name in lower case."""
    match = _TOKEN.match(text, pos)
    if not match or _touches_identifier(text, match.start(), match.end()):
        return None
    word = match.group().rstrip(".")
    folded = _fold(word)
    known = _known_first(folded)
    if folded in _STOP and not known:
        return None
    if not (known or (_capitalised(word) and len(word) > 1 and not known_only)):
        return None
    end = match.start() + len(word)
    rest = _surnames(text, end, lower_ok=True)
    if rest is None:
        return None
    after = _TOKEN.match(text, rest[0] + 1)
    if after and _fold(after.group()) in _ORG_AFTER:
        return None
    # An unknown word must end its clause ("Hi Xiomara,"), not start one ("Hi, Commit 99").
    if not (known or keyed or _CLAUSE_END.match(text, rest[0])):
        return None
    return match.start(), max(rest[0], end)


def _titled(text: str) -> list[tuple[int, int]]:
    spans = []
    for match in _TITLE_RE.finditer(text):
        if not text[match.end()].isupper():
            continue
        rest = _surnames(text, match.end() - 1, lower_ok=False)
        if rest and rest[1]:
            spans.append((match.start(), rest[0]))
    return spans


def _greeted(text: str) -> list[tuple[int, int]]:
    spans = []
    for pattern in (_GREETING, _SIGNOFF, _INTRO):
        for match in pattern.finditer(text):
            span = _name_at(text, match.end(), known_only=pattern is _INTRO)
            if span:
                spans.append(span)
    return spans


def _keyed(text: str) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    folded = text.casefold()
    if not any(key in folded for key in _KEY_CUES):
        return spans
    for match in _KEYED.finditer(text):
        if _NOT_PERSON_KEY.search(match.group(1)):
            continue
        group = next(g for g in (2, 3, 4) if match.group(g) is not None)
        if group == 4:
            span = _name_at(text, match.start(4), keyed=True)
            if span:
                spans.append(span)
            continue
        value = match.group(group)
        start, end = match.start(group), match.end(group)
        stripped = value.strip(" .")
        start += len(value) - len(value.lstrip(" "))
        end -= len(value) - len(value.rstrip(" ."))
        words = [_fold(w) for w in _TOKEN.findall(stripped)]
        if not words or any(c.isdigit() or c in "@/\\{}[]<>=_" for c in stripped):
            continue
        if not (stripped[0].isupper() or words[0] in _lists()[0]):
            continue
        if len(words) <= 5 and not any(w in _PLACE_WORDS or w in _STOP for w in words):
            spans.append((start, end))
    return spans


def _inverted(text: str) -> list[tuple[int, int]]:
    spans = []
    for match in _INVERTED.finditer(text):
        last, first = _fold(match.group(1)), _fold(match.group(2))
        if last in _lists()[2] and _known_first(first) and match.group(1)[0].isupper():
            spans.append((match.start(), match.end()))
    return spans


def _listed(text: str, spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Capitalised names joined by "and" or a comma to a name already found."""
    more = []
    for _, end in spans:
        cursor = end
        while True:
            join = _LIST_JOIN.match(text, cursor)
            if not join:
                break
            match = _TOKEN.match(text, join.end())
            if not match or not _capitalised(match.group()) or _fold(match.group()) in _STOP:
                break
            rest = _surnames(text, match.end(), lower_ok=False)
            if rest is None or not rest[1]:
                break
            more.append((match.start(), rest[0]))
            cursor = rest[0]
    return more


def _value(text: str) -> str:
    words = [_fold(w) for w in _TOKEN.findall(text)]
    while words and re.fullmatch(_TITLE.lower(), words[0]):
        words = words[1:]
    return " ".join(words) or text.casefold()


def detect(text: str) -> list[Found]:
    """PERSON spans in ``text``, non-overlapping, each keyed on its case-folded name."""
    if not text:
        return []
    spans = _titled(text) + _greeted(text) + _after_first_name(text) + _keyed(text)
    spans += _inverted(text)
    spans += _listed(text, spans)
    spans.sort(key=lambda s: (s[0], -s[1]))
    found: list[Found] = []
    cursor = 0
    for start, end in spans:
        if end <= start:
            continue
        if start < cursor:
            if end > cursor and found:  # overlapping candidates: take their union
                last = found[-1]
                found[-1] = Found(last.start, end, KIND, _value(text[last.start : end]))
                cursor = end
            continue
        found.append(Found(start, end, KIND, _value(text[start:end])))
        cursor = end
    return found


__all__ = ["KIND", "detect"]
