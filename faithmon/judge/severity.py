"""Which claims are critical: the ones a severity rule matches, named by that rule.

The default rules (``rules/severity.toml``) mark amounts with a currency, dosages and
units, dates and times, durations, percentages and rates, identifiers (order, account,
policy numbers) and a few safety terms. A bare number or a capitalised word is not a
rule: "Print the label from the Orders page" is not critical.
"""

from __future__ import annotations

from dataclasses import replace
from functools import cache
from pathlib import Path

from ..model import Claim
from .rulebook import RuleSet, load

MISQUOTE = "misquote"
"""The rule a misquoted passage is critical by: a quotation that is not in its source."""


@cache
def default_rules() -> RuleSet:
    return load(None, "severity.toml")


def load_rules(path: str | Path | None) -> RuleSet:
    return default_rules() if not path else load(path, "severity.toml")


def rule_for(text: str, rules: RuleSet | None = None) -> str | None:
    """The severity rule ``text`` falls under, or None when it is not critical."""
    return (rules or default_rules()).first(text)


def rated(claim: Claim, rules: RuleSet) -> Claim:
    """The claim with ``critical`` and ``critical_rule`` set by ``rules``; a misquote
    stays critical whatever the rules say."""
    if claim.critical_rule == MISQUOTE:
        return claim
    rule = rules.first(claim.text)
    return replace(claim, critical=rule is not None, critical_rule=rule)
