"""The review loop's values: an item of the queue with the claims a person labels, and a
label."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

Label = Literal["supported", "unsupported", "contradicted", "not_verifiable", "partial"]
LABELS: tuple[str, ...] = (
    "supported",
    "unsupported",
    "contradicted",
    "not_verifiable",
    "partial",
)


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
    critical_rule: str | None = None
    missing: str | None = None
    """For ``partial``: the part the judge found unsupported."""
    citations: tuple[int, ...] = ()
    citation: str | None = None
    """Whether the chunks the claim's markers cite support it (``correct``, ``wrong``...)."""


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
    """A reviewer's label of one claim; ``critical`` is severity, apart from agreement.

    A reviewer may split a claim the judge left whole (one label per ``part``, each with
    its ``text``) or merge claims the judge split (one label per merged index, each with
    the same verdict, ``merged`` naming them all, and the merged ``text``)."""

    index: int
    verdict: Label
    critical: bool = False
    part: int = 0
    text: str | None = None
    """The reviewer's wording of a split part or of merged claims; None: as stored."""
    merged: tuple[int, ...] = ()


def shape_problem(labels: Sequence[ClaimLabel], claims: int) -> str | None:
    """What is wrong with a reviewer's labels of an item of ``claims`` claims, or None: each
    names a claim; a claim is labelled once, or split into parts 0, 1, ... (at least two,
    each with its text), or merged with at least one other claim (all with one verdict)."""
    parts: dict[int, list[int]] = {}
    merges: dict[int, tuple[int, ...]] = {}
    for one in labels:
        if not 0 <= one.index < claims:
            return f"claim {one.index} does not exist (claims: 0 to {claims - 1})"
        if one.merged:
            group = tuple(sorted(set(one.merged)))
            if len(group) < 2 or one.index not in group:
                return f"a merge needs two claims or more, claim {one.index} among them"
            if merges.setdefault(one.index, group) != group or one.index in parts:
                return f"claim {one.index} is labelled twice"
            continue
        if one.index in merges:
            return f"claim {one.index} is labelled twice"
        parts.setdefault(one.index, []).append(one.part)
    for index, numbers in parts.items():
        if len(set(numbers)) < len(numbers):
            return f"claim {index} is labelled twice"
        if sorted(numbers) != list(range(len(numbers))):
            return f"the parts of claim {index} must be numbered 0 to {len(numbers) - 1}"
        split = [one for one in labels if one.index == index and not one.merged]
        if len(numbers) > 1 and any(not (one.text or "").strip() for one in split):
            return f"each part of claim {index} needs its text"
    for group in sorted(set(merges.values())):
        missing = [i for i in group if merges.get(i) != group]
        if missing:
            return f"the merge of claims {'+'.join(map(str, group))} misses claim {missing[0]}"
        verdicts = {one.verdict for one in labels if one.index in group and one.merged}
        if len(verdicts) > 1:
            return f"merged claims {'+'.join(map(str, group))} need one verdict"
    return None


def combined(parts: Sequence[tuple[int, str]]) -> str:
    """One label for a claim from its parts' (part, label): supported only when every
    part is; else the first part's label that is not."""
    for _, label in sorted(parts):
        if label != "supported":
            return label
    return "supported"


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
                "critical_rule": c.critical_rule,
                "missing": c.missing,
                "citations": list(c.citations),
                "citation": c.citation,
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
