"""Policy findings counted per segment over a recent window: what ``policy_violation``
alerts are raised from. Rule names and counts only, never a finding's text: that is an
excerpt of an answer, and may be personal data even after scrubbing."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class RuleCount:
    rule: str
    answers: int
    """Evaluations in which the rule found something."""
    findings: int
    """What it found in them (an answer may hold two addresses)."""


@dataclass(frozen=True, slots=True)
class SegmentFindings:
    """One segment's evaluations in the window, and those that carry policy findings."""

    segment: Mapping[str, str]
    root: str
    """The key of its partition's overall (``""`` or ``tenant=T``), as drift names it."""
    evaluations: int
    flagged: frozenset[int]
    """The ids of its evaluations with findings."""
    rules: tuple[RuleCount, ...]
    """Most answers first."""
    examples: tuple[tuple[str, tuple[str, ...]], ...]
    """(trace id, the rules it hit) of its newest flagged evaluations."""

    @property
    def share(self) -> float:
        return len(self.flagged) / self.evaluations if self.evaluations else 0.0
