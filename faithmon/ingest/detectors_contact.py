"""E-mail addresses (plain, internationalised, spelled out) and phone numbers."""

from __future__ import annotations

import functools
import re
import unicodedata

import phonenumbers

from .detectors_common import Detector, Found, lowered, preceded_by_identifier_word
from .detectors_gates import numeric

# Unicode letters and digits in the local part and the domain (IDN), an ASCII
# punycode TLD or a Unicode one. ``<jane@x.org>`` and ``mailto:jane@x.org`` need
# nothing more: the address is bounded by the bracket or the colon.
_EMAIL = re.compile(
    r"(?<![\w.+-])[^\W_][\w.%+-]{0,63}@(?:[^\W_][\w-]{0,62}\.)+(?:[^\W\d_]{2,24}|xn--[a-z0-9-]{1,59})\b"
)
_AT = r"(?:\s*[\[({<]\s*at\s*[\])}>]\s*|\s+at\s+)"
_DOT = r"(?:\s*[\[({<]\s*dot\s*[\])}>]\s*|\s+dot\s+)"
# "jane dot roe at gmail dot com", "jane [at] example [dot] org", "jane (at) example.org".
_SPELLED = re.compile(
    rf"(?i)(?<![\w.])([^\W_][\w.+-]{{0,63}}(?:{_DOT}[^\W_][\w-]{{0,62}}){{0,4}})"
    rf"({_AT})([^\W_][\w-]{{0,62}}(?:(?:{_DOT}|\.)[^\W_][\w-]{{0,62}}){{1,4}})\b"
)
_DOT_SPLIT = re.compile(rf"(?i){_DOT}|\.")
# With a bare " at " and " dot " the words must look like an address, not prose
# ("look at the dot com bubble").
_COMMON_TLDS = frozenset(
    "com org net edu gov io co uk de fr es it nl eu be ch at ca au us info biz me dev ai".split()
)
_PROSE = frozenset("the a an this that my our your his her their its all one me us you".split())


def _email_value(raw: str) -> str:
    return unicodedata.normalize("NFKC", raw).casefold()


def _spelled_emails(text: str) -> list[Found]:
    found = []
    pos = 0
    while (m := _SPELLED.search(text, pos)) is not None:
        # A refused match ("me at jane dot roe") may hide the address inside it.
        pos = m.start() + 1
        local, at, domain = m.group(1), m.group(2), m.group(3)
        words = [w for w in _DOT_SPLIT.split(local + "." + domain) if w]
        bare = not any(c in at for c in "[({<")
        if bare and (
            not re.search(rf"(?i){_DOT}", domain)
            or words[-1].lower() not in _COMMON_TLDS
            or any(w.lower() in _PROSE for w in words)
        ):
            continue
        local_words = [w for w in _DOT_SPLIT.split(local) if w]
        domain_words = [w for w in _DOT_SPLIT.split(domain) if w]
        value = ".".join(local_words) + "@" + ".".join(domain_words)
        found.append(Found(m.start(), m.end(), "EMAIL", _email_value(value)))
        pos = m.end()
    return found


# "scheme://user:password@host": the password and host are not an e-mail address.
_URL_CREDENTIAL = re.compile(r"://[^\s/@:]*:$")


def _plain_emails(text: str) -> list[Found]:
    """The matches of ``_EMAIL``, as ``finditer`` gives them, looked for from each "@".

    A match holds one "@" and starts at most 64 characters before it (its local part), so
    none starts before that: ``re`` skips the rest of the text, which the pattern (it
    starts with a lookbehind) would otherwise try at every character.
    """
    found = []
    cursor = 0
    at = text.find("@")
    while at >= 0:
        m = _EMAIL.search(text, max(cursor, at - 64))
        if m is None:
            break
        if not _URL_CREDENTIAL.search(text, max(0, m.start() - 64), m.start()):
            found.append(Found(m.start(), m.end(), "EMAIL", _email_value(m.group(0))))
        cursor = m.end()
        at = text.find("@", cursor)
    return found


def emails(text: str) -> list[Found]:
    found = _plain_emails(text)
    low = lowered(text)  # "dot", "at]" and "at)" are found in it as in text.lower()
    if "dot" in low or (("]" in low or ")" in low) and ("at]" in low or "at)" in low)):
        found += _spelled_emails(text)
    return found


# Runs of at least seven digits with the separators phone numbers use; only these
# are handed to phonenumbers, which is by far the costliest detector.
_PHONE_CANDIDATE = re.compile(r"\d[\d ().\-/]{5,20}\d")
# "phone number 415 ..." is a phone number although "number" usually makes an id.
_PHONE_WORD_BEFORE = re.compile(
    r"(?i)(?:phone|tel(?:ephone)?|call|fax|mobile|cell|contact|backup|whatsapp|sms)\s+"
    r"(?:number|no\.?|#)\s*[:#]?\s*$"
)
_DATE_TIME = re.compile(r"\d{4}[-/.]\d{1,2}[-/.]\d{1,2}\b")
_EXTENSION = re.compile(r"(?i)\s*(?:x|ext\.?|extension|;ext=)\s*(\d{1,6})\b")
_EXT_START = frozenset(" xXeE;")


@functools.lru_cache(maxsize=8192)
def _phone_e164(raw: str, region: str) -> str | None:
    """The E.164 form of a valid phone number, else None (cached: numbers recur)."""
    try:
        number = phonenumbers.parse(raw, region)
    except phonenumbers.NumberParseException:
        return None
    if not phonenumbers.is_valid_number(number):
        return None
    return phonenumbers.format_number(number, phonenumbers.PhoneNumberFormat.E164)


def _international(raw: str, region: str) -> str | None:
    """A number written with its country code (``+44``, ``0044``, ``011 44``), else None."""
    head = raw.lstrip("(")
    if head.startswith("+"):
        return _phone_e164(head, region)
    if head.startswith("00"):
        return _phone_e164("+" + head[2:].lstrip(" ().-/"), region)
    if head.startswith("011"):
        return _phone_e164("+" + head[3:].lstrip(" ().-/"), region)
    return None


_DOTTED_QUAD = re.compile(r"\d{1,3}(?:\.\d{1,3}){3}")
_DATE = re.compile(r"^\d{4}[-/.]\d{1,2}[-/.]\d{1,2}$|^\d{1,2}[-/.]\d{1,2}[-/.]\d{4}$")


def _national_lengths(region: str) -> frozenset[int]:
    """Digit counts a national number of ``region`` can have, with or without its prefix."""
    metadata = phonenumbers.PhoneMetadata.metadata_for_region(region)
    if metadata is None or metadata.general_desc is None:
        return frozenset(range(7, 16))
    lengths = set(metadata.general_desc.possible_length or range(7, 16))
    prefix = metadata.national_prefix or ""
    return frozenset(lengths | {n + len(prefix) for n in lengths})


# National numbers of other countries than ``region``: Europe's largest, in this order
# where a number is valid in several ("020 7946 0958" is London's and Amsterdam's).
FALLBACK_REGIONS = ("GB", "FR", "DE", "IT", "ES", "NL", "BE", "AT", "CH", "IE", "PT")
# Words that say a phone number follows, in the fallback regions' languages.
_PHONE_CUE = re.compile(
    r"(?i)\b(?:call|phone|tel|mobile?s?|mob|cell|ring|dial|fax|whatsapp|sms|text|reach|"
    r"hotline|line|number|contact|ll[aá]m|tel[eé]fono|m[oó]vil|appel|t[ée]l[ée]phone|"
    r"portable|t[ée]l|anruf|telefon|handy|mobil|chiama|cellulare|bel|telefoon|mobiel|"
    r"nummer|num[ée]ro|n[uú]mero)"
)
_GROUPS = re.compile(r"\d+")
_SSN_SHAPE = re.compile(r"\d{3}-\d{2}-\d{4}$")


def _trunk_shaped(raw: str) -> bool:
    """Written as European national numbers are: a trunk "0", then groups of two or more
    digits apart ("01 42 68 53 00", "030 12345678", "020-123 4567", "06.12.34.56.78");
    never one digit alone, as in an ISBN ("0-306-40615-2")."""
    if not raw.startswith("0") or raw.startswith("00") or raw.isdigit() or _SSN_SHAPE.match(raw):
        return False
    return all(len(group) >= 2 for group in _GROUPS.findall(raw))


def _foreign(raw: str, home: str) -> str | None:
    """The E.164 form of a national number valid in a fallback region, else None."""
    for region in FALLBACK_REGIONS:
        if region != home:
            e164 = _phone_e164(raw, region)
            if e164 is not None:
                return e164
    return None


class PhoneDetector:
    """Phone numbers valid for ``phonenumbers``: international anywhere, national in ``region``.

    A national number of a ``FALLBACK_REGIONS`` country counts too when it is written
    as one (``_trunk_shaped``) or a word such as "call", "tel" or "mobile" comes up to
    40 characters before it. A number keeps its extension ("x204", "ext. 12"), keyed
    with it.
    """

    # A class, not a closure: the scrubber holding it is pickled to ingest's workers.
    def __init__(self, region: str) -> None:
        self.region = region
        self.national = _national_lengths(region)
        self.foreign = frozenset().union(*(_national_lengths(r) for r in FALLBACK_REGIONS))
        self.lengths = self.national | self.foreign

    def __call__(self, text: str) -> list[Found]:
        region, national, foreign, lengths = self.region, self.national, self.foreign, self.lengths
        found: list[Found] = []
        if not numeric(text):
            return found
        for candidate in _PHONE_CANDIDATE.finditer(text):
            start, end = candidate.start(), candidate.end()
            full_stop = candidate.group(0).find(". ")
            if full_stop > 0:  # "fax +442079460000. 12% off" ends at the full stop
                end = start + full_stop
            # The pattern starts at a digit: take back a leading "+" or "(".
            while start and text[start - 1] in "+(":
                start -= 1
            extension = _EXTENSION.match(text, end) if text[end : end + 1] in _EXT_START else None
            after_end = extension.end() if extension else end
            before = text[start - 1] if start else " "
            after = text[after_end : after_end + 2] + "  "
            if before.isalnum() or before in "_.-" or after[0].isalnum() or after[0] in "_-":
                continue
            if after[0] == "." and after[1].isalnum():
                continue  # a longer dotted number or a pattern ("203.0.113.x")
            raw = text[start:end]
            digits = sum(map(str.isdigit, raw))
            head = raw.lstrip("(")
            international = head.startswith(("+", "00", "011"))
            # Cheap refusals before the costly parse: too short, the wrong length for
            # a national number, a date, or an identifier ("order 4155550132").
            if digits < 7 or (not international and digits not in lengths):
                continue
            if after[0] == ":" and after[1].isdigit():
                continue  # a time ("2026-02-01 13:45")
            if _DATE.match(raw) or _DATE_TIME.match(raw) or _DOTTED_QUAD.fullmatch(head):
                continue  # a date, or an IPv4 address the IP detector left (documentation)
            if preceded_by_identifier_word(text, start) and not _PHONE_WORD_BEFORE.search(
                text[max(0, start - 32) : start]
            ):
                continue
            e164 = _international(head, region) if international else None
            if e164 is None and head[:1] != "+" and digits in national:
                e164 = _phone_e164(raw, region)
            if (
                e164 is None
                and not international
                and digits in foreign
                and (
                    _trunk_shaped(head)
                    or _PHONE_CUE.search(text, max(0, start - 40), start) is not None
                )
            ):
                e164 = _foreign(raw, region)
            if e164 is None:
                continue
            if extension:
                found.append(Found(start, after_end, "PHONE", f"{e164};ext={extension.group(1)}"))
            else:
                found.append(Found(start, start + len(raw), "PHONE", e164))
        return found


def phone_detector(region: str) -> Detector:
    return PhoneDetector(region)
