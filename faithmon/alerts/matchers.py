"""Label matchers, as Prometheus and Alertmanager write them: ``name=value``, ``name!=value``,
``name=~regex``, ``name!~regex``, over an alert's labels (routes and silences both use them).

A regex matches the whole value (anchored, as Alertmanager's do). A label the alert does not
carry has the empty value, so ``route!=health`` matches an alert without a route.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from ..model import Alert

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.\-]*")
_OPERATORS = ("=~", "!~", "!=", "=")


@dataclass(frozen=True, slots=True)
class Matcher:
    name: str
    operator: str
    value: str
    pattern: re.Pattern[str] | None = None

    def matches(self, labels: Mapping[str, str]) -> bool:
        found = labels.get(self.name, "")
        if self.operator == "=":
            return found == self.value
        if self.operator == "!=":
            return found != self.value
        assert self.pattern is not None
        hit = self.pattern.fullmatch(found) is not None
        return hit if self.operator == "=~" else not hit

    def __str__(self) -> str:
        return f"{self.name}{self.operator}{self.value}"


def parse(text: str) -> Matcher:
    """One matcher from its text; ValueError saying what is wrong."""
    for operator in _OPERATORS:
        name, found, value = text.partition(operator)
        if not found:
            continue
        name = name.strip()
        if not _NAME.fullmatch(name):
            raise ValueError(f"{text!r}: {name!r} is not a label name")
        value = value.strip().strip('"')
        pattern = None
        if operator in ("=~", "!~"):
            try:
                pattern = re.compile(value)
            except re.error as exc:
                raise ValueError(f"{text!r}: not a regular expression ({exc})") from None
        return Matcher(name, operator, value, pattern)
    raise ValueError(f"{text!r}: expected name=value, name!=value, name=~regex or name!~regex")


def parse_all(texts: Iterable[str]) -> tuple[Matcher, ...]:
    return tuple(parse(text) for text in texts)


def match_all(matchers: Iterable[Matcher], labels: Mapping[str, str]) -> bool:
    """Every matcher holds (no matcher: every alert matches)."""
    return all(m.matches(labels) for m in matchers)


def alert_labels(alert: Alert) -> dict[str, str]:
    """What matchers see of an alert: its segment's labels, ``kind`` (the rule) and
    ``severity``; ``tenant`` is a segment label when the alert has one."""
    return {**dict(alert.segment), "kind": alert.rule, "severity": alert.severity}
