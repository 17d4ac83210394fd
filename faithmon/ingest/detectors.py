"""PII detectors: each maps a text to the spans it finds, with a normalised value.

Normalising is what makes pseudonyms consistent: "+1 (415) 555-0100" and
"415-555-0100" are one phone number, "Jane.Doe@Example.com" and
"jane.doe@example.com" one address, "DE89 3704 ..." and "DE893704..." one IBAN.

Values that look alike but must stay (order ids, dates, prices, versions,
product codes, durations, counts) are kept by checksums (cards, IBANs), by
validation (IP addresses, phone numbers) and by the words just before a
number ("order 4155550100" is an order id, "firmware 2.4.18.1" a version).
"""

from __future__ import annotations

import functools
import ipaddress
import re
from collections.abc import Callable
from typing import NamedTuple

import phonenumbers


class Found(NamedTuple):
    start: int
    end: int
    kind: str
    value: str
    """The normalised value the pseudonym is keyed on."""


Detector = Callable[[str], list[Found]]

_EMAIL = re.compile(
    r"(?<![\w.+-])[A-Za-z0-9][A-Za-z0-9._%+-]{0,63}@(?:[A-Za-z0-9-]{1,63}\.)+[A-Za-z]{2,24}\b"
)
# Words that make the number after them an identifier or a version, not PII.
_NOT_PII_BEFORE = re.compile(
    r"(?i)(?:order|invoice|tracking|ticket|case|ref(?:erence)?|sku|id|no\.?|number|#|"
    r"version|firmware|release|build|v)\s*[:#]?\s*$"
)


def _bounded(text: str, start: int, end: int, extra: str = "") -> bool:
    """No word character (or one of ``extra``) touches the match on either side.

    The patterns leave their boundaries to this check: a regex that starts with a
    lookbehind cannot skip ahead and costs two to three times more per text.
    """
    before = text[start - 1] if start else " "
    after = text[end] if end < len(text) else " "
    return not (before.isalnum() or before == "_" or before in extra) and not (
        after.isalnum() or after == "_" or after in extra
    )


def _preceded_by_identifier_word(text: str, start: int) -> bool:
    return bool(_NOT_PII_BEFORE.search(text[max(0, start - 24) : start]))


def emails(text: str) -> list[Found]:
    if "@" not in text:
        return []
    return [Found(m.start(), m.end(), "EMAIL", m.group(0).lower()) for m in _EMAIL.finditer(text)]


# Runs of at least seven digits with the separators phone numbers use; only these
# are handed to phonenumbers, which is by far the costliest detector.
_PHONE_CANDIDATE = re.compile(r"\d[\d ().\-/]{5,20}\d")


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


_DATE = re.compile(r"^\d{4}[-/.]\d{1,2}[-/.]\d{1,2}$|^\d{1,2}[-/.]\d{1,2}[-/.]\d{4}$")


def _national_lengths(region: str) -> frozenset[int]:
    """Digit counts a national number of ``region`` can have, with or without its prefix."""
    metadata = phonenumbers.PhoneMetadata.metadata_for_region(region)
    if metadata is None or metadata.general_desc is None:
        return frozenset(range(7, 16))
    lengths = set(metadata.general_desc.possible_length or range(7, 16))
    prefix = metadata.national_prefix or ""
    return frozenset(lengths | {n + len(prefix) for n in lengths})


def phone_detector(region: str) -> Detector:
    """Phone numbers valid for ``phonenumbers``: international anywhere, national in ``region``."""
    national = _national_lengths(region)

    def phones(text: str) -> list[Found]:
        found = []
        for candidate in _PHONE_CANDIDATE.finditer(text):
            start, end = candidate.start(), candidate.end()
            # The pattern starts at a digit: take back a leading "+" or "(".
            while start and text[start - 1] in "+(":
                start -= 1
            before = text[start - 1] if start else " "
            after = text[end : end + 2] + "  "
            if before.isalnum() or before in "_.-" or after[0].isalnum() or after[0] in "_-":
                continue
            if after[0] == "." and after[1].isdigit():
                continue  # a longer dotted number
            raw = text[start:end].rstrip(" ().-/")
            digits = sum(c.isdigit() for c in raw)
            # Cheap refusals before the costly parse: too short, the wrong length for
            # a national number, a date, or an identifier ("order 4155550132").
            if digits < 7 or (not raw.startswith("+") and digits not in national):
                continue
            if _DATE.match(raw) or _preceded_by_identifier_word(text, start):
                continue
            e164 = _phone_e164(raw, region)
            if e164 is not None:
                found.append(Found(start, start + len(raw), "PHONE", e164))
        return found

    return phones


_CARD = re.compile(r"\d[\d -]{11,22}\d")
_CARD_PREFIX = re.compile(r"^(?:4|5[1-5]|2[2-7]|3[47]|3[0689]|6(?:011|5|4[4-9]|22)|35|62)")


def _luhn(digits: str) -> bool:
    total = 0
    for i, char in enumerate(reversed(digits)):
        d = int(char)
        if i % 2 == 1:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


def cards(text: str) -> list[Found]:
    found = []
    for match in _CARD.finditer(text):
        raw = match.group(0)
        if "  " in raw or "--" in raw or not _bounded(text, match.start(), match.end(), "-"):
            continue
        digits = raw.replace(" ", "").replace("-", "")
        if 13 <= len(digits) <= 19 and _CARD_PREFIX.match(digits) and _luhn(digits):
            found.append(Found(match.start(), match.end(), "CARD", digits))
    return found


_IBAN = re.compile(r"[A-Z]{2}\d\d(?: ?[A-Z0-9]){11,30}")


def _iban_valid(compact: str) -> bool:
    rearranged = compact[4:] + compact[:4]
    number = "".join(str(int(c, 36)) for c in rearranged)
    return int(number) % 97 == 1


def ibans(text: str) -> list[Found]:
    found = []
    for match in _IBAN.finditer(text):
        if match.start() and text[match.start() - 1].isalnum():
            continue
        compact = match.group(0).replace(" ", "")
        # A greedy match may run into the next word: try shorter tails too.
        for end in range(len(compact), 14, -1):
            if _iban_valid(compact[:end]):
                raw_end = _raw_end(match.group(0), end)
                found.append(Found(match.start(), match.start() + raw_end, "IBAN", compact[:end]))
                break
    return found


def _raw_end(raw: str, compact_length: int) -> int:
    seen = 0
    for i, char in enumerate(raw):
        if char != " ":
            seen += 1
            if seen == compact_length:
                return i + 1
    return len(raw)


_SSN = re.compile(r"\d{3}-\d\d-\d{4}")
_SSN_LABELLED = re.compile(
    r"(?:SSN|ssn|Social [Ss]ecurity|SOCIAL SECURITY|social security)(?: [Nn]umber)?\W{0,3}(\d{9})"
)


def _ssn_valid(digits: str) -> bool:
    area, group, serial = digits[:3], digits[3:5], digits[5:]
    return area not in ("000", "666") and area[0] != "9" and group != "00" and serial != "0000"


def ssns(text: str) -> list[Found]:
    found = []
    if "-" in text:
        for m in _SSN.finditer(text):
            digits = m.group(0).replace("-", "")
            if _bounded(text, m.start(), m.end(), "-") and _ssn_valid(digits):
                found.append(Found(m.start(), m.end(), "SSN", digits))
    if "SSN" not in text and "ssn" not in text and "ecurity" not in text.lower():
        return found
    for m in _SSN_LABELLED.finditer(text):
        if _bounded(text, m.start(1), m.end(1)) and _ssn_valid(m.group(1)):
            found.append(Found(m.start(1), m.end(1), "SSN", m.group(1)))
    return found


_IPV4 = re.compile(r"\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}")
# An address may end a clause ("block 2001:db8::1: it ..."): a colon then a non-hex
# character does not continue it.
_IPV6 = re.compile(r"[0-9A-Fa-f]*:[0-9A-Fa-f]*:[0-9A-Fa-f:]*")


def ips(text: str) -> list[Found]:
    found = []
    for match in _IPV4.finditer(text):
        start, end = match.start(), match.end()
        if not _bounded(text, start, end, ".") and not (
            _bounded(text, start, end)
            and text[end] == "."
            and not text[end + 1 : end + 2].isdigit()
        ):
            continue  # part of a longer dotted number (a version), unless a full stop ends it
        if _preceded_by_identifier_word(text, start):
            continue
        try:
            address = ipaddress.IPv4Address(match.group(0))
        except ValueError:
            continue
        found.append(Found(match.start(), match.end(), "IP", str(address)))
    if text.count(":") >= 2:
        for match in _IPV6.finditer(text):
            if not _bounded(text, match.start(), match.end()):
                continue
            raw = match.group(0)
            if raw.endswith(":") and not raw.endswith("::"):
                raw = raw[:-1]  # the colon ends the clause, not the address
            if raw.count(":") < 2 or (raw.replace(":", "").isdigit() and "::" not in raw):
                continue  # times such as 14:00:59
            try:
                address6 = ipaddress.IPv6Address(raw)
            except ValueError:
                continue
            found.append(Found(match.start(), match.start() + len(raw), "IP", str(address6)))
    return found


# One pass for all token shapes: each alternative is a known key or token format.
_SECRET_TOKENS = re.compile(
    r"\b(?:sk-(?:proj-|ant-)?[A-Za-z0-9_-]{20,}"
    r"|(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}"
    r"|(?:AKIA|ASIA)[0-9A-Z]{16}\b"
    r"|(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{36,}\b"
    r"|github_pat_[A-Za-z0-9_]{22,}"
    r"|xox[abposr]-[A-Za-z0-9-]{10,}"
    r"|eyJ[A-Za-z0-9_-]{5,}\.eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,})"
)
_BEARER = re.compile(r"(?i)\bbearer\s+([A-Za-z0-9._~+/=-]{16,})")
_URL_CREDENTIALS = re.compile(r"\b[a-zA-Z][a-zA-Z0-9+.-]*://([^\s/:@]+:[^\s/@]+)@")


_SECRET_HINTS = (
    "sk-",
    "_live_",
    "_test_",
    "AKIA",
    "ASIA",
    "ghp_",
    "gho_",
    "ghu_",
    "ghs_",
    "ghr_",
    "github_pat_",
    "xox",
    "eyJ",
    "earer",
    "://",
)


def secrets(text: str) -> list[Found]:
    if not any(hint in text for hint in _SECRET_HINTS):
        return []
    found = [Found(m.start(), m.end(), "SECRET", m.group(0)) for m in _SECRET_TOKENS.finditer(text)]
    for pattern in (_BEARER, _URL_CREDENTIALS):
        found += [Found(m.start(1), m.end(1), "SECRET", m.group(1)) for m in pattern.finditer(text)]
    return found


def builtin(phone_region: str) -> list[Detector]:
    """The pattern detectors, most specific first (a card is not also a phone number)."""
    return [secrets, emails, ibans, cards, ssns, ips, phone_detector(phone_region)]
