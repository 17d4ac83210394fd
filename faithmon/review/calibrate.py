"""Score thresholds calibrated on reviewed answers: for a segment, the lowest false
acceptance the judge's strict score allows while false rejection stays within a bound,
and a guard band around the threshold where answers go to review instead of a verdict.

An answer *passes* at threshold ``t`` when its score is at least ``t``. Candidates are the
scores seen (each within 0 to 1, as a threshold must be: one above 1 would fail every
answer). Among the candidates whose weighted false rejection is at most
``max_false_rejection``, the one with the lowest weighted false acceptance wins, ties going
to the lower threshold (fewer rejections). The weights are the inverse inclusion
probabilities, as in :mod:`.agreement`.

A threshold rests on the answers of its segment: :func:`shortfall` says when they cannot
carry one yet (too few, or none that the reviewers passed, so no score separates them).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace

from ..model.review import Reviewed, Threshold

Point = tuple[float, bool, float]
"""(judge score, reviewers passed the answer, weight)."""


def _rates(points: Sequence[Point], t: float) -> tuple[float | None, float | None]:
    failed = sum(w for _, human, w in points if not human)
    passed = sum(w for _, human, w in points if human)
    accepted = sum(w for score, human, w in points if not human and score >= t)
    rejected = sum(w for score, human, w in points if human and score < t)
    fa = accepted / failed if failed > 0 else None
    fr = rejected / passed if passed > 0 else None
    return fa, fr


def calibrate(
    points: Sequence[Point], max_false_rejection: float, guard: float
) -> Threshold | None:
    """The threshold for ``points`` (None without any), and why it was chosen."""
    candidates = sorted({score for score, _, _ in points if 0.0 <= score <= 1.0})
    if not candidates:
        return None
    best: tuple[float, float, float] | None = None  # (fa, t, fr)
    for t in candidates:
        fa, fr = _rates(points, t)
        if fr is not None and fr > max_false_rejection:
            continue
        key = (fa if fa is not None else 0.0, t, fr if fr is not None else 0.0)
        if best is None or key[0] < best[0] or (key[0] == best[0] and t < best[1]):
            best = key
    if best is None:
        # Even passing every answer rejects too many: the bound cannot hold; pass all.
        t = candidates[0]
        fa, fr = _rates(points, t)
        why = (
            f"no threshold keeps false rejection within {max_false_rejection:.0%}; "
            "the lowest score passes everything"
        )
    else:
        fa, t, fr = best
        fa, fr = _rates(points, t)
        why = (
            f"lowest false acceptance ({_pct(fa)}) with false rejection {_pct(fr)} "
            f"within {max_false_rejection:.0%}"
        )
    return Threshold(
        threshold=round(t, 4),
        guard_low=round(max(0.0, t - guard), 4),
        guard_high=round(min(1.0, t + guard), 4),
        false_acceptance=None if fa is None else round(fa, 4),
        false_rejection=None if fr is None else round(fr, 4),
        n=len(points),
        rationale=why,
    )


def shortfall(points: Sequence[Point], min_answers: int) -> str | None:
    """Why no threshold may rest on ``points`` yet, or None when one may: fewer than
    ``min_answers`` reviewed answers, or none the reviewers passed (every score is then as
    bad as any other)."""
    if len(points) < min_answers:
        return f"{len(points)} of the {min_answers} labelled answers a threshold needs"
    if not any(human for _, human, _ in points):
        return f"the reviewers passed none of its {len(points)} answers: no score separates them"
    return None


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.1%}"


def answer_points(items: Iterable[Reviewed]) -> list[Point]:
    """(score, reviewers passed it, weight) of each reviewed answer with a score."""
    points = []
    for item in items:
        labels = item.first()
        if item.score is not None and labels:
            human = all(v == "supported" for v in labels.values())
            points.append((item.score, human, item.weight))
    return points


def by_segment(items: Sequence[Reviewed], dimensions: Sequence[str]) -> dict[str, list[Reviewed]]:
    """The items of each segment ("" is overall; then ``name=value`` per dimension)."""
    groups: dict[str, list[Reviewed]] = {"": list(items)}
    for item in items:
        for name in dimensions:
            value = item.segment.get(name)
            if value:
                groups.setdefault(f"{name}={value}", []).append(item)
    return groups


def dataset_version(items: Iterable[Reviewed]) -> str:
    """A digest of the labels a calibration read: the same labels, the same version."""
    text = json.dumps(
        sorted(
            [item.trace_id, reviewer, index, label]
            for item in items
            for reviewer, labels in item.labels.items()
            for index, label in labels.items()
        ),
        separators=(",", ":"),
    )
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def rescored(
    items: Sequence[Reviewed], scores: Mapping[str, Mapping[str, float]]
) -> dict[str, list[Reviewed]]:
    """Per judge configuration, the reviewed answers it has scored, each with its own
    score: the people's verdict on an answer holds whichever judge scored it, so a new
    configuration is calibrated once the reviewed traces are rescored."""
    out: dict[str, list[Reviewed]] = {}
    for judge, by_trace in sorted(scores.items()):
        mine = [
            replace(item, judge=judge, score=by_trace[item.trace_id])
            for item in items
            if item.trace_id in by_trace
        ]
        if mine:
            out[judge] = mine
    return out
