"""The review loop's values: an item of the queue with the claims a person labels, and a
label."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

Label = Literal["supported", "unsupported", "contradicted", "not_verifiable"]
LABELS: tuple[str, ...] = ("supported", "unsupported", "contradicted", "not_verifiable")


@dataclass(frozen=True, slots=True)
class ReviewClaim:
    """A claim as the judge left it: what a reviewer labels, by its 0-based index."""

    index: int
    text: str
    verdict: str
    chunk: int | None = None
    quote: str | None = None
    critical: bool = False
    stage: str | None = None
    rationale: str | None = None
    """The LLM judge's reason, for a verdict other than supported."""


@dataclass(frozen=True, slots=True)
class ReviewItem:
    id: int
    trace_id: str
    tenant: str | None
    judge: str
    reason: str
    priority: int
    inclusion_probability: float
    reviews_wanted: int
    reviews_done: int
    status: str
    created_at: datetime
    claims: tuple[ReviewClaim, ...] = ()
    lease_owner: str | None = None
    lease_expires: datetime | None = None


@dataclass(frozen=True, slots=True)
class ClaimLabel:
    """A reviewer's label of one claim; ``critical`` is severity, apart from agreement."""

    index: int
    verdict: Label
    critical: bool = False


@dataclass(frozen=True, slots=True)
class Reviewed:
    """One reviewed evaluation, as the statistics see it."""

    judge: str
    judge_verdicts: tuple[str, ...]
    """The judge's verdict on each claim, by index."""
    labels: Mapping[str, Mapping[int, str]]
    """Per reviewer (in the order they labelled): claim index → label."""
    inclusion_probability: float = 1.0
    segment: Mapping[str, str] = field(default_factory=dict)
    score: float | None = None
    """The judge's strict score (for calibration)."""
    trace_id: str = ""

    @property
    def weight(self) -> float:
        return 1.0 / self.inclusion_probability if self.inclusion_probability > 0 else 0.0

    def first(self) -> Mapping[int, str]:
        """The first reviewer's labels: what the judge is measured against."""
        return next(iter(self.labels.values()), {})


@dataclass(frozen=True, slots=True)
class Threshold:
    threshold: float
    guard_low: float
    guard_high: float
    """Scores in ``[guard_low, guard_high)`` go to review rather than get a verdict."""
    false_acceptance: float | None
    false_rejection: float | None
    n: int
    rationale: str


def item_json(item: ReviewItem) -> dict[str, Any]:
    """An item as ``faithmon review queue --json`` and the read API show it."""
    return {
        "trace_id": item.trace_id,
        "tenant": item.tenant,
        "judge": item.judge,
        "reason": item.reason,
        "priority": item.priority,
        "inclusion_probability": item.inclusion_probability,
        "reviews_wanted": item.reviews_wanted,
        "reviews_done": item.reviews_done,
        "status": item.status,
        "created_at": item.created_at.isoformat(),
        "claims": [
            {
                "index": c.index,
                "text": c.text,
                "verdict": c.verdict,
                "chunk": c.chunk,
                "quote": c.quote,
                "critical": c.critical,
                "rationale": c.rationale,
            }
            for c in item.claims
        ],
    }


def gate(score: float | None, kept: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """The verdict of the threshold in use on a score: ``review`` inside its guard band,
    else ``pass`` at or above the threshold and ``fail`` below; None without either."""
    if score is None or not kept:
        return None
    low, high, threshold = kept["guard_low"], kept["guard_high"], kept["threshold"]
    verdict = "review" if low <= score < high else "pass" if score >= threshold else "fail"
    return {
        "verdict": verdict,
        "threshold": threshold,
        "guard_low": low,
        "guard_high": high,
        "segment": kept.get("segment") or "overall",
        "dataset_version": kept.get("dataset_version"),
    }
