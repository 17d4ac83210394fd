"""Payment cards (Luhn), IBANs (country length and mod 97) and US social security numbers."""

from __future__ import annotations

import re

from .detectors_common import Found, bounded, lowered
from .detectors_gates import iban_start, numeric, ssn_shape

# Spaces, dashes, dots, slashes or underscores between the groups; a JSON
# number or string is bounded by its quotes, colon, comma or brace.
_CARD = re.compile(r"\d[\d ./_-]{11,22}\d")
_CARD_PREFIX = re.compile(r"^(?:4|5[1-5]|2[2-7]|3[47]|3[0689]|6(?:011|5|4[4-9]|22)|35|62)")
_NO_SEPARATORS = str.maketrans("", "", " ./_-")
_DIGITS = frozenset("0123456789")


def _luhn(digits: str) -> bool:
    total = 0
    for i, char in enumerate(reversed(digits)):
        d = int(char)
        if i % 2 == 1:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


def cards(text: str) -> list[Found]:
    found: list[Found] = []
    if not numeric(text):
        return found
    for match in _CARD.finditer(text):
        start, end = match.start(), match.end()
        if not bounded(text, start, end, "-") or (
            text[end : end + 1] == "." and text[end + 1 : end + 2].isdigit()
        ):
            continue
        raw = match.group(0)
        digits = raw.translate(_NO_SEPARATORS)
        if not (13 <= len(digits) <= 19 and _CARD_PREFIX.match(digits) and _luhn(digits)):
            continue
        if any(s + t in raw for s in (set(raw) - _DIGITS) for t in " ./_-"):
            continue  # doubled separators: a list of numbers, not one card
        found.append(Found(start, end, "CARD", digits))
    return found


# Upper or lower case, compact or grouped by spaces, dashes or dots.
_IBAN = re.compile(r"[A-Za-z]{2}\d\d(?:[ .-]?[A-Za-z0-9]){11,30}")
_IBAN_SEPARATORS = " .-"
# ISO 13616 registry: the length of each country's IBAN.
_IBAN_LENGTHS = {
    **dict.fromkeys(["NO"], 15),
    **dict.fromkeys(["BE"], 16),
    **dict.fromkeys(["DK", "FI", "FO", "GL", "NL", "SD"], 18),
    **dict.fromkeys(["MK", "SI"], 19),
    **dict.fromkeys(["AT", "BA", "EE", "KZ", "LT", "LU", "XK"], 20),
    **dict.fromkeys(["CH", "CR", "HR", "LI", "LV"], 21),
    **dict.fromkeys(["BG", "BH", "DE", "GB", "GE", "IE", "ME", "RS", "VA"], 22),
    **dict.fromkeys(["AE", "GI", "IL", "IQ", "TL"], 23),
    **dict.fromkeys(["AD", "CZ", "ES", "MD", "PK", "RO", "SA", "SE", "SK", "TN", "VG"], 24),
    **dict.fromkeys(["LY", "PT", "ST"], 25),
    **dict.fromkeys(["IS", "TR"], 26),
    **dict.fromkeys(["FR", "GR", "IT", "MC", "MR", "SM"], 27),
    **dict.fromkeys(["AL", "AZ", "BY", "CY", "DO", "GT", "HU", "LB", "PL", "SV"], 28),
    **dict.fromkeys(["BR", "EG", "PS", "QA", "UA"], 29),
    **dict.fromkeys(["JO", "KW", "MU"], 30),
    **dict.fromkeys(["MT", "SC"], 31),
    **dict.fromkeys(["LC"], 32),
    **dict.fromkeys(["RU"], 33),
}


def _iban_valid(compact: str) -> bool:
    rearranged = compact[4:] + compact[:4]
    number = "".join(str(int(c, 36)) for c in rearranged)
    return int(number) % 97 == 1


def ibans(text: str) -> list[Found]:
    found: list[Found] = []
    if not iban_start(text):
        return found
    pos = 0
    while (match := _IBAN.search(text, pos)) is not None:
        start = match.start()
        # A match may run on into the next IBAN ("IT60 ... e NL91..."): after a
        # refusal look again from the next character, after a find from its end.
        pos = start + 1
        if start and text[start - 1].isalnum():
            continue
        raw = match.group(0)
        length = _IBAN_LENGTHS.get(raw[:2].upper())
        compact = raw.upper().translate(_NO_SEPARATORS)
        if length is None or len(compact) < length:
            continue
        end = start + _raw_end(raw, length)
        if end < len(text) and text[end].isalnum():
            continue  # the match ran on into a longer word
        if _iban_valid(compact[:length]):
            found.append(Found(start, end, "IBAN", compact[:length]))
            pos = end
    return found


def _raw_end(raw: str, compact_length: int) -> int:
    seen = 0
    for i, char in enumerate(raw):
        if char not in _IBAN_SEPARATORS:
            seen += 1
            if seen == compact_length:
                return i + 1
    return len(raw)


_SSN = re.compile(r"\d{3}-\d\d-\d{4}")
# After a label the number may also be spaced or unseparated: "SSN 123 45 6789".
_SSN_LABELLED = re.compile(
    r"(?i:ssn|social security)(?i: (?:number|no\.?))?\W{0,3}(\d{3}([ -]?)\d\d\2\d{4})"
)


def _ssn_valid(digits: str) -> bool:
    area, group, serial = digits[:3], digits[3:5], digits[5:]
    return area not in ("000", "666") and area[0] != "9" and group != "00" and serial != "0000"


def ssns(text: str) -> list[Found]:
    found = []
    if "-" in text and numeric(text) and ssn_shape(text):
        for m in _SSN.finditer(text):
            digits = m.group(0).replace("-", "")
            if bounded(text, m.start(), m.end(), "-") and _ssn_valid(digits):
                found.append(Found(m.start(), m.end(), "SSN", digits))
    # The lowered text holds "ssn" and "ecurity" wherever the tests below find them; an
    # ASCII one holds "ssn" or "social security" wherever ``_SSN_LABELLED`` matches.
    low = lowered(text)
    if ("ssn" not in low and "ecurity" not in low) or (
        text.isascii() and "ssn" not in low and "social security" not in low
    ):
        return found
    if (
        "SSN" not in text
        and "ssn" not in text
        and "Ssn" not in text
        and "ecurity" not in text.lower()
    ):
        return found
    for m in _SSN_LABELLED.finditer(text):
        digits = m.group(1).replace(" ", "").replace("-", "")
        if bounded(text, m.start(1), m.end(1), "-") and _ssn_valid(digits):
            found.append(Found(m.start(1), m.end(1), "SSN", digits))
    return found
