"""Canonical forms for numbers, amounts and dates, so "$1,299" ~ "1299" and "4.0" ~ "four".

``canonical("1,299.50")`` is ``"1299.5"``; ``word_value("thirty-two")`` is ``"32"``. Units
and currency signs are dropped by the tokeniser (``text.UNIT_WORDS``), so "5 days" and
"five days" both leave the number 5 and the word "day". An ISO date or timestamp in the
context also yields its month's name, so "2013-08-19" supports "August 2013".
"""

from __future__ import annotations

import re

_ONES = (
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
    "fifteen sixteen seventeen eighteen nineteen"
).split()
_TENS = "twenty thirty forty fifty sixty seventy eighty ninety".split()
WORD_VALUES: dict[str, int] = {word: value for value, word in enumerate(_ONES)}
WORD_VALUES.update({word: 20 + 10 * i for i, word in enumerate(_TENS)})
WORD_VALUES.update({"dozen": 12, "hundred": 100, "thousand": 1000})
MONTHS = (
    "january february march april may june july august september october november december"
).split()
MONTH_ABBREVIATIONS = {month[:3]: month for month in MONTHS} | {"sept": "september"}
ISO_DATE = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")
_CLOCK = re.compile(r"\b([01]?\d|2[0-3]):[0-5]?\d\b")


def canonical(number: str) -> str:
    """A digit string without grouping commas, leading zeros or a zero fraction."""
    number = number.replace(",", "")
    if "." in number:
        number = number.rstrip("0").rstrip(".")
    number = number.lstrip("0")
    if not number or number.startswith("."):
        number = "0" + number
    return number


def word_value(words: str) -> str | None:
    """``"thirty-two"`` → ``"32"``, ``"four"`` → ``"4"``; None when not a number word."""
    parts = words.split("-")
    if len(parts) == 2 and parts[0] in _TENS and parts[1] in _ONES[1:10]:
        return str(WORD_VALUES[parts[0]] + WORD_VALUES[parts[1]])
    if len(parts) == 1 and parts[0] in WORD_VALUES:
        return str(WORD_VALUES[parts[0]])
    return None


def implied(text: str) -> tuple[set[str], set[str]]:
    """Words and numbers that ``text`` states in another form.

    An ISO date gives its month's name ("2013-08-19" → "august"); a 24-hour time gives
    its 12-hour hour ("17:30" → "5").
    """
    words = set()
    numbers = set()
    for match in ISO_DATE.finditer(text):
        month = int(match.group(2))
        if 1 <= month <= 12:
            words.add(MONTHS[month - 1])
    for match in _CLOCK.finditer(text):
        hour = int(match.group(1))
        numbers.add(str(hour - 12 if hour > 12 else 12 if hour == 0 else hour))
    return words, numbers
