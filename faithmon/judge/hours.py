"""Opening hours: the days and times a claim states, against a record's ``hours`` field.

A data-to-text answer turns ``"hours": {"Monday": "17:0-21:0", ...}`` into prose ("open
Monday to Thursday from 5 PM to 9 PM, Friday from 11 AM to 10 PM"). Its words are all
in the record, so only the binding of each time range to its days can tell a right
schedule from a wrong one. ``conflict`` reads the claim's day expressions (single days,
ranges, "weekdays", "weekends", "daily", "seven days a week") and time ranges (12- and
24-hour, "noon", "midnight"), binds each range to its days (clause by clause; within
one, the days before it when the clause names days first, else the days after it; a
later, narrower statement such as "until 10 pm on Fridays" overrides an earlier one),
and compares them with the record: a range that differs on a named day, a day named
open that the record does not list, "hours vary" where they do not, or "extended hours on
weekends" where those days close no later: contradicted. Hours stated where the record's
are null, or for a day it lists as ``0:0-0:0`` (closed in one source's format, open all
day in another's: the record does not say which), are unsupported.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass

from .json_records import Conflict

DAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_DAY = r"(monday|tuesday|wednesday|thursday|friday|saturday|sunday)s?"
_DAY_EXPRESSION = re.compile(
    rf"\b{_DAY}(?:\s*(?:-|–|to|through|thru|until)\s*{_DAY})?"
    r"|\b(weekdays?|weekends?|daily|every day|all week|(?:seven|7) days(?: a| per| of the)? week)\b"
)
_TIME = (
    r"(?:(?<![\d.:])(\d{1,2})(?::(\d{1,2}))?(?!\d|\.\d)\s*(a\.?m\.?|p\.?m\.?)?"
    r"|(noon|midnight))"
)
_TIME_RANGE = re.compile(
    rf"(?:\bbetween\s+{_TIME}\s+and\s+{_TIME}|{_TIME}\s*(?:-|–|to|until|till)\s*{_TIME})"
)
_OPEN = re.compile(r"\b(?:open|opens|operat\w*|hours)\b")
_CLOSED = re.compile(r"\bclosed\b")
_SPAN = re.compile(r"^(\d{1,2}):(\d{1,2})-(\d{1,2}):(\d{1,2})$")
_WEEK = (0, 1, 2, 3, 4, 5, 6)
_GROUPS = {"weekday": (0, 1, 2, 3, 4), "weekend": (5, 6)}

Span = tuple[int, int]
"""Opening and closing minute of a day; the closing minute taken modulo a day."""


@dataclass(frozen=True, slots=True)
class Schedule:
    """One record chunk's opening hours: ``None`` when the record has them null."""

    chunk: int
    hours: dict[int, Span] | None
    """Day number (Monday 0) → its span; a day not listed is closed."""
    quote: str
    """The ``"hours": ...`` text of the chunk, to cite."""
    unmarked: frozenset[int] = frozenset()
    """Days listed ``0:0-0:0``: closed or open all day, the record does not say."""


def schedules(chunks: Sequence[str]) -> list[Schedule]:
    """The opening hours of the chunks that are JSON records with an ``hours`` field."""
    found = []
    for index, chunk in enumerate(chunks):
        text = chunk.strip()
        if not text.startswith("{") or '"hours"' not in text:
            continue
        try:
            record = json.loads(text)
        except ValueError:
            continue
        if not isinstance(record, dict) or "hours" not in record:
            continue
        quote = re.search(r'"hours"\s*:\s*(?:\{[^{}]*\}|null)', chunk)
        if quote is None:
            continue
        hours = record["hours"]
        if hours is None:
            found.append(Schedule(index, None, quote.group(0)))
        elif isinstance(hours, dict):
            parsed, unmarked = _parse(hours)
            if parsed:  # every day "0:0-0:0" (or none listed) says nothing
                found.append(Schedule(index, parsed, quote.group(0), unmarked))
    return found


def _parse(hours: dict[str, object]) -> tuple[dict[int, Span], frozenset[int]]:
    parsed: dict[int, Span] = {}
    unmarked: set[int] = set()
    for day, value in hours.items():
        if day.lower() not in DAYS:
            continue
        match = _SPAN.match(str(value).strip())
        if match is None:
            continue
        h1, m1, h2, m2 = (int(g) for g in match.groups())
        span = (h1 * 60 + m1, (h2 * 60 + m2) % 1440)
        if span == (0, 0):
            unmarked.add(DAYS.index(day.lower()))
        else:
            parsed[DAYS.index(day.lower())] = span
    return parsed, frozenset(unmarked)


def conflict(claim: str, found: Sequence[Schedule]) -> Conflict | None:
    """How the claim's schedule disagrees with the record's, if it states one and does."""
    if not found:
        return None
    text = _HAPPY_HOUR.sub(" ", claim.lower())
    said = _said(text)
    if said is None:
        return None
    schedule = found[0]
    if schedule.hours is None:
        return Conflict("unsupported", schedule.chunk, schedule.quote)
    wrong = Conflict("contradicted", schedule.chunk, schedule.quote)
    hours = schedule.hours
    unverified = False
    for day, span in said.days.items():
        if day in schedule.unmarked:
            unverified = True
            continue
        listed = hours.get(day)
        if listed is None:
            if span != _CLOSED_DAY:
                return wrong
        elif span == _CLOSED_DAY or (span is not None and not _agrees(span, listed)):
            return wrong
    if said.varying and len(set(hours.values())) == 1 and len(hours) >= 2:
        return wrong  # "hours vary" where every open day has the same
    if said.longer and not _longer(said.longer, hours):
        return wrong
    return Conflict("unsupported", schedule.chunk, schedule.quote) if unverified else None


@dataclass
class _Said:
    days: dict[int, tuple[int | None, int | None] | None]
    """Day → the span the claim gives it (None: only said open)."""
    varying: bool = False
    longer: tuple[int, ...] = ()
    """Days said to have extended or later hours than the others."""


# A day the claim says is closed; a span with a None side leaves that side unsaid.
_CLOSED_DAY: tuple[int | None, int | None] = (-1, -1)
_HAPPY_HOUR = re.compile(r"\bhappy hours?\b")
_SPREAD = re.compile(r"\b(?:vary|varies|varying|varied|depend\w*|rang\w*)\b")
_EXTENDED = re.compile(r"\b(?:extended|longer|later)\b")
# Words that make a segment's days an exception without a schedule of its own.
_EXCEPTION = re.compile(r"\b(?:shorter|earlier|different|except|brief|break|special|holidays?)\b")
_SEGMENT = re.compile(
    r"[,;()]|\s(?:while|with|whereas|but)\s|\sand\s(?=from|on|until|open|clos|extend|it|they|\d)"
)
_ROUND_THE_CLOCK = re.compile(r"\b24(?: hours|/7| hours a day)\b")
_UNTIL = re.compile(
    r"\b(?:until|till|closes? at|closing at)\s+(?:(?<![\d.:])(\d{1,2})(?::(\d{1,2}))?(?!\d|\.\d)"
    r"\s*(a\.?m\.?|p\.?m\.?)?|(noon|midnight))"
)


def _said(text: str) -> _Said | None:
    """The schedule a claim states, day by day; None when it states none."""
    opening = bool(_OPEN.search(text))
    said = _Said({}, varying=bool(_SPREAD.search(text)) and "hours" in text)
    stated = said.varying
    carried: tuple[int, ...] = ()  # a segment's days with no time: "Monday to Sunday, 9 to 5"
    pending: Span | None = None  # a segment's time with no days: "9 to 5, Monday to Sunday"
    if _ROUND_THE_CLOCK.search(text):
        return _Said(dict.fromkeys(_WEEK, (0, 0)))
    for segment in _SEGMENT.split(text):
        days = [(m.start(), _days(m)) for m in _DAY_EXPRESSION.finditer(segment)]
        ranges = [(m.start(), r) for m in _TIME_RANGE.finditer(segment) if (r := _range(m))]
        named = tuple(d for _, group in days for d in group)
        if ranges and not _SPREAD.search(segment):
            stated = True
            if not days and carried:
                days = [(-1, carried)]
            if not days:
                pending = ranges[0][1] if len(ranges) == 1 else None
            for group, span in _bind(days, ranges):
                for day in group:
                    said.days[day] = span
            carried = ()
            continue
        if pending is not None and named and opening:
            for day in named:
                said.days[day] = pending
            pending, carried = None, ()
            continue
        pending = None
        until = _UNTIL.search(segment)
        close = _minute(until.groups(), None) if until is not None else None
        if named and close is not None and opening:
            stated = True
            for day in named:
                before = said.days.get(day)
                said.days[day] = (before[0] if before else None, close % 1440)
        elif named and _EXTENDED.search(segment) and "hour" in segment:
            stated = True
            said.longer = named
            for day in named:
                said.days[day] = None
        elif named and _CLOSED.search(segment):
            stated = True
            for day in named:
                said.days[day] = _CLOSED_DAY
        elif named and _EXCEPTION.search(segment):
            for day in named:
                said.days[day] = None
        elif named and opening and not ranges:
            stated = True
            for day in named:
                said.days.setdefault(day, None)
        carried = named
    return said if stated else None


def _bind(
    days: Sequence[tuple[int, tuple[int, ...]]], ranges: Sequence[tuple[int, Span]]
) -> list[tuple[tuple[int, ...], Span]]:
    """Each time range of one segment with its days: those before it when the segment
    names days first ("Monday to Friday 9 to 5, Saturday 10 to 2"), else those after."""
    if not days:
        return []
    days_first = days[0][0] < ranges[0][0]
    bound = []
    for i, (at, span) in enumerate(ranges):
        if days_first:
            low = ranges[i - 1][0] if i else -2
            mine = [g for d, g in days if low < d < at]
        else:
            high = ranges[i + 1][0] if i + 1 < len(ranges) else 10**9
            mine = [g for d, g in days if at < d < high]
        bound.append((tuple(d for g in mine for d in g), span))
    return bound


def _agrees(span: tuple[int | None, int | None], listed: Span) -> bool:
    return all(side is None or side == want for side, want in zip(span, listed, strict=True))


def _longer(days: tuple[int, ...], hours: dict[int, Span]) -> bool:
    """Every one of ``days`` closes later, or is open longer, than every other open day."""
    inside = [hours[d] for d in days if d in hours]
    outside = [span for d, span in hours.items() if d not in days]
    if not inside or not outside:
        return not outside
    return min(map(_close, inside)) > max(map(_close, outside)) or min(map(_length, inside)) > max(
        map(_length, outside)
    )


def _close(span: Span) -> int:
    opening, closing = span
    return closing + 1440 if closing <= opening else closing


def _length(span: Span) -> int:
    return _close(span) - span[0]


def _days(match: re.Match[str]) -> tuple[int, ...]:
    first, last, group = match.group(1), match.group(2), match.group(3)
    if first is not None:
        start = DAYS.index(first)
        if last is None:
            return (start,)
        end = DAYS.index(last)
        return tuple((start + i) % 7 for i in range((end - start) % 7 + 1))
    word = (group or "").rstrip("s")
    return _GROUPS.get(word, _WEEK)


def _range(match: re.Match[str]) -> Span | None:
    groups = match.groups()
    # Two spellings of a range ("between ... and ...", "... to ..."), each of two times.
    if match.group(0).startswith("between"):
        return _span(groups[0:4], groups[4:8])
    return _span(groups[8:12], groups[12:16])


def _span(first: Sequence[str | None], second: Sequence[str | None]) -> Span | None:
    opening = _minute(first, second)
    closing = _minute(second, None)
    if opening is None or closing is None:
        return None
    return opening, closing % 1440


def _minute(time: Sequence[str | None], other: Sequence[str | None] | None) -> int | None:
    """Minutes after midnight; a time without am/pm takes the other's, for "11 to 9 pm"."""
    hour, minute, meridiem, word = time
    if word is not None:
        return 720 if word == "noon" else 0
    if hour is None:
        return None
    h, m = int(hour), int(minute or 0)
    if h > 24 or m > 59:
        return None
    if meridiem is None and minute is None:
        if other is None or other[2] is None or other[0] is None:
            return None  # "3 to 5": a count, not a time
        meridiem = other[2] if h <= int(other[0]) % 12 or h == 12 else "am"
    if meridiem is not None:
        if h > 12:
            return None
        h = h % 12 + (12 if meridiem.startswith("p") else 0)
    return h * 60 + m


_SCHEDULE_WORDS = re.compile(
    r"\b(?:open|opens|opened|opening|operat\w*|hours?|of operation|(?:of|throughout) the week|"
    r"every day|each day|a week|weekly|days?|weeks?|closed|extended|extends?|specific)\b",
    re.IGNORECASE,
)


def without_schedule(claim: str, found: Sequence[Schedule]) -> str | None:
    """The claim with its schedule cut out when the record's hours bear it out ("open
    every day from 10 AM to 11 PM" leaves "The restaurant is"), so the rest is judged
    on its own; None when the claim states no schedule or the record does not hold it."""
    if not found or found[0].hours is None:
        return None
    text = _HAPPY_HOUR.sub(" ", claim.lower())
    if _said(text) is None or conflict(claim, found) is not None:
        return None
    for pattern in (_TIME_RANGE, _UNTIL, _DAY_EXPRESSION, _SCHEDULE_WORDS):
        claim = pattern.sub(" ", claim) if pattern is _SCHEDULE_WORDS else _cut(pattern, claim)
    return re.sub(r"\s+", " ", claim).strip()


def _cut(pattern: re.Pattern[str], claim: str) -> str:
    """``claim`` with the stretches ``pattern`` finds in its lower case blanked."""
    lower = claim.lower()
    pieces, end = [], 0
    for match in pattern.finditer(lower):
        pieces.append(claim[end : match.start()])
        end = match.end()
    return " ".join([*pieces, claim[end:]])
