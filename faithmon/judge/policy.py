"""Disclosures an answer must never contain, found before any judge.

Rules come from ``FAITHMON_POLICY_RULES`` (the shipped ``rules/policy.toml`` by
default): named patterns and term lists. With ``pii = true`` (the default), personal
data in the answer that neither the question nor any chunk passed to the generator
contained is a finding too:
a scrubbed pseudonym (``<EMAIL_1a2b3c4d>``) or, where scrubbing is off, an e-mail
address, phone or card number. A finding never changes the faithfulness score.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import cache
from pathlib import Path

from ..model import PolicyFinding
from .rulebook import RuleSet, load

PII = "pii"
EXCERPT = 80
_PII = re.compile(
    r"<[A-Z][A-Z_]{1,30}_[0-9a-f]{4,16}>|[\w.+-]{1,64}@[\w-]{1,63}(?:\.[\w-]{1,63})+|"
    r"(?<![\w+])\+?\d[\d ()-]{7,16}\d(?!\w)|\b(?:\d[ -]?){13,19}\b"
)


@cache
def default_rules() -> RuleSet:
    return load(None, "policy.toml")


def load_rules(path: str | Path | None) -> RuleSet:
    return default_rules() if not path else load(path, "policy.toml")


def _digits(text: str) -> str:
    return re.sub(r"\D", "", text)


def findings(
    answer: str, chunks: Sequence[str], rules: RuleSet, question: str = ""
) -> tuple[PolicyFinding, ...]:
    """Every policy hit in ``answer``, each once, in rule order. Personal data the user
    gave in ``question`` (their own order number, their own address) is no disclosure."""
    found = [PolicyFinding(h.rule, h.text[:EXCERPT]) for h in rules.hits(answer)]
    if rules.option(PII, True):
        context = "\n".join([*chunks, question])
        digits = _digits(context)
        for match in _PII.finditer(answer):
            value = match.group(0).strip()
            numeric = not re.search(r"[A-Za-z@<]", value)
            if value in context or (numeric and _digits(value) in digits):
                continue
            if numeric and len(_digits(value)) < 9:
                continue  # a short number is a quantity, not a phone or card
            found.append(PolicyFinding(PII, value[:EXCERPT]))
    return tuple(dict.fromkeys(found))
