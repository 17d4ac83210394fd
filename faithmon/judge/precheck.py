"""Deterministic work before any LLM call: sentences, non-claims, verbatim support.

A sentence found (normalised) inside a chunk is supported with itself as the
quote; a greeting, abstention or question asserts nothing. Only what is left
goes to the LLM, so copy-heavy answers often cost no call at all.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from ..model import Claim
from . import text as t
from .severity import rule_for


def is_critical(sentence: str) -> bool:
    """Whether a default severity rule (amount, dosage, date, identifier...) matches."""
    return rule_for(sentence) is not None


@dataclass(slots=True)
class Prepared:
    sentences: list[str]
    resolved: dict[int, Claim] = field(default_factory=dict)
    targets: list[int] = field(default_factory=list)
    cites: dict[int, tuple[int, ...]] = field(default_factory=dict)
    """Cited sentences and the chunks they cite, for the judge to check in the same call."""
    recheck: list[int] = field(default_factory=list)
    """Resolved sentences asked again only for their citation (their quote lies elsewhere)."""

    @property
    def has_claims(self) -> bool:
        return bool(self.resolved or self.targets)


def prepare(chunks: Sequence[str], answer: str) -> Prepared:
    sentences = t.sentences(answer)
    prepared = Prepared(sentences)
    normalised_chunks = [t.normalise(chunk) for chunk in chunks]
    for index, sentence in enumerate(sentences):
        if t.is_non_claim(sentence):
            continue
        needle = t.normalise(t.strip_end(sentence))
        found = next(
            (i for i, c in enumerate(normalised_chunks) if t.holds_phrase(c, needle)), None
        )
        if found is None:
            prepared.targets.append(index)
        else:
            rule = rule_for(sentence)
            prepared.resolved[index] = Claim(
                sentence,
                "supported",
                found,
                t.strip_end(sentence),
                rule is not None,
                critical_rule=rule,
            )
    return prepared


def mark_cited(prepared: Prepared, cited: Mapping[str, Sequence[int]]) -> Prepared:
    """Note which sentences cite which chunks (``cited``: sentence → chunk indices); a
    sentence resolved verbatim from a chunk it does not cite is to be asked again, for its
    citation alone."""
    wanted = {t.normalise(s): tuple(c) for s, c in cited.items()}
    for index, sentence in enumerate(prepared.sentences):
        named = wanted.get(t.normalise(sentence))
        if not named:
            continue
        prepared.cites[index] = named
        resolved = prepared.resolved.get(index)
        if resolved is not None and resolved.chunk not in named:
            prepared.recheck.append(index)
    return prepared
