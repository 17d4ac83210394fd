"""Rule files: named patterns and term lists in TOML, for severity and policy.

A rule is a regular expression (``pattern``, matched without regard to case) or a list
of words and phrases (``terms``, matched as whole words). A rule set's ``digest`` is
its identity: the judge configuration names it, so editing a rule file starts a new
configuration rather than changing what old scores meant.
"""

from __future__ import annotations

import hashlib
import json
import re
import tomllib
import unicodedata
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from ..errors import ConfigError

_KEYS = frozenset({"name", "pattern", "terms"})


@dataclass(frozen=True, slots=True)
class Rule:
    name: str
    regex: re.Pattern[str]


@dataclass(frozen=True, slots=True)
class Hit:
    rule: str
    text: str
    start: int
    end: int


@dataclass(frozen=True, slots=True)
class RuleSet:
    """The rules of one file, in order, and what identifies them."""

    rules: tuple[Rule, ...]
    digest: str
    source: str
    """Where the rules came from: ``default`` or the file's path."""
    options: tuple[tuple[str, Any], ...] = ()
    """The file's top-level settings other than rules (e.g. policy's ``pii``)."""

    def option(self, key: str, default: Any = None) -> Any:
        return dict(self.options).get(key, default)

    def first(self, text: str) -> str | None:
        """The name of the first rule that matches ``text``; None when none does."""
        folded = unicodedata.normalize("NFKC", text)
        return next((r.name for r in self.rules if r.regex.search(folded)), None)

    def hits(self, text: str) -> list[Hit]:
        """Every match of every rule, in rule order then position."""
        folded = unicodedata.normalize("NFKC", text)
        return [
            Hit(r.name, m.group(0), m.start(), m.end())
            for r in self.rules
            for m in r.regex.finditer(folded)
            if m.group(0).strip()
        ]


def _rule(raw: Any, where: str) -> Rule:
    if not isinstance(raw, dict):
        raise ConfigError(f"{where}: each [[rule]] must be a table")
    unknown = set(raw) - _KEYS
    if unknown:
        raise ConfigError(f"{where}: unknown key {sorted(unknown)[0]!r} in a rule")
    name = raw.get("name")
    if not isinstance(name, str) or not name.strip():
        raise ConfigError(f"{where}: every rule needs a name")
    pattern, terms = raw.get("pattern"), raw.get("terms")
    if (pattern is None) == (terms is None):
        raise ConfigError(f"{where}: rule {name!r} needs exactly one of pattern or terms")
    if terms is not None:
        if (
            not isinstance(terms, list)
            or not terms
            or not all(isinstance(x, str) and x.strip() for x in terms)
        ):
            raise ConfigError(f"{where}: rule {name!r}: terms must be a list of words")
        pattern = r"\b(?:" + "|".join(re.escape(x.strip()) for x in terms) + r")\b"
    if not isinstance(pattern, str) or not pattern:
        raise ConfigError(f"{where}: rule {name!r}: pattern must be a string")
    try:
        regex = re.compile(pattern, re.IGNORECASE)
    except re.error as exc:
        raise ConfigError(f"{where}: rule {name!r}: bad pattern ({exc})") from None
    if regex.search(""):
        raise ConfigError(f"{where}: rule {name!r} matches empty text")
    return Rule(name.strip(), regex)


def parse(text: str, where: str, default: str | None = None) -> RuleSet:
    """The rules of ``text``; ``default`` names the shipped file an ``extends`` builds on."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{where}: not valid TOML ({exc})") from None
    raw_rules = data.pop("rule", [])
    if not isinstance(raw_rules, list):
        raise ConfigError(f"{where}: rules are written as [[rule]] tables")
    rules = tuple(_rule(r, where) for r in raw_rules)
    extends = data.pop("extends", None)
    if extends is not None:
        # ``extends = "default"``: the shipped rules first, then this file's own.
        if extends != "default" or default is None:
            raise ConfigError(f'{where}: extends may only name "default"')
        rules = parse(default_text(default), "default").rules + rules
    names = [r.name for r in rules]
    if len(set(names)) != len(names):
        raise ConfigError(f"{where}: two rules share a name")
    options = tuple(sorted(data.items()))
    canonical = json.dumps(
        [[r.name, r.regex.pattern] for r in rules] + [list(o) for o in options],
        ensure_ascii=False,
    )
    digest = hashlib.sha256(canonical.encode()).hexdigest()[:10]
    return RuleSet(rules, digest, where, options)


def default_text(name: str) -> str:
    return resources.files(__package__).joinpath("rules", name).read_text(encoding="utf-8")


def load(path: str | Path | None, default: str) -> RuleSet:
    """The rules of ``path``, or the shipped ``default`` file when no path is given."""
    if path is None or str(path) == "":
        return parse(default_text(default), "default")
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot read rules file {path}: {exc.strerror or exc}") from None
    return parse(text, str(path), default)
