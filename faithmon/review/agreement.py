"""How a judge agrees with the people who labelled its claims, corrected for how the queue
sampled.

A reviewed evaluation stands for ``1 / inclusion_probability`` evaluations of production
traffic (the queue reviews every critical case but a few per cent of all-supported ones):
each figure is computed with those weights, and its interval uses Kish's effective sample
size ``(Σw)² / Σw²``, so a figure resting on a few heavily weighted items says so.

- Claim level: the judge's verdict against the reviewer's label, as *supported* against
  *not supported* (``unsupported``, ``contradicted``, ``partial`` and ``not_verifiable``
  all fail).
- Answer level: the judge passes an answer when it supports every claim; a reviewer when
  every labelled claim is supported. *False acceptance* is the share of answers reviewers
  failed that the judge passed; *false rejection* the share they passed that it failed.
- Cohen's κ, balanced accuracy (the mean of the two per-class recalls) and the confusion
  matrix, each with its raw count ``n``; 95% intervals: Wilson's for rates, the large-sample
  standard error for κ.
- Between reviewers: κ over the four labels on the claims two reviewers labelled.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from typing import Any

from ..model import claim_supported
from ..model.review import Reviewed

PASS, FAIL = "pass", "fail"
Z95 = 1.959964


def verdict_passes(verdict: str) -> bool:
    return claim_supported(verdict)


def cohen_kappa(pairs: Iterable[tuple[str, str, float]]) -> tuple[float | None, float, float]:
    """(κ, observed agreement, chance agreement) of weighted (a, b, weight) pairs; κ is None
    when chance agreement is total (one category only)."""
    total = 0.0
    agree = 0.0
    left: dict[str, float] = defaultdict(float)
    right: dict[str, float] = defaultdict(float)
    for a, b, w in pairs:
        total += w
        agree += w if a == b else 0.0
        left[a] += w
        right[b] += w
    if total <= 0:
        return None, 0.0, 0.0
    po = agree / total
    pe = sum(left[k] * right.get(k, 0.0) for k in left) / total**2
    if pe >= 1:
        return None, po, pe
    return (po - pe) / (1 - pe), po, pe


def effective_n(weights: Sequence[float]) -> float:
    squares = sum(w * w for w in weights)
    return sum(weights) ** 2 / squares if squares > 0 else 0.0


def wilson(rate: float, n: float) -> list[float] | None:
    """Wilson's 95% interval of a proportion over ``n`` (effective) observations."""
    if n <= 0:
        return None
    z2 = Z95 * Z95
    centre = (rate + z2 / (2 * n)) / (1 + z2 / n)
    half = Z95 * math.sqrt(rate * (1 - rate) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    return [round(max(0.0, centre - half), 4), round(min(1.0, centre + half), 4)]


def _rate(pairs: Sequence[tuple[bool, bool, float]], given_human: bool) -> dict[str, Any]:
    """The share of ``pairs`` whose human verdict is ``given_human`` that the judge got wrong."""
    subset = [(j, w) for j, h, w in pairs if h == given_human]
    weights = [w for _, w in subset]
    total = sum(weights)
    wrong = sum(w for j, w in subset if j != given_human)
    rate = wrong / total if total > 0 else None
    n_eff = effective_n(weights)
    return {
        "rate": None if rate is None else round(rate, 4),
        "ci95": None if rate is None else wilson(rate, n_eff),
        "n": len(subset),
    }


def binary(pairs: Sequence[tuple[bool, bool, float]]) -> dict[str, Any]:
    """Figures of weighted (judge passes, human passes, weight) pairs."""
    cells = {"judge_pass_human_pass": 0.0, "judge_pass_human_fail": 0.0}
    cells |= {"judge_fail_human_pass": 0.0, "judge_fail_human_fail": 0.0}
    for judge, human, w in pairs:
        cells[f"judge_{PASS if judge else FAIL}_human_{PASS if human else FAIL}"] += w
    kappa, po, pe = cohen_kappa((PASS if j else FAIL, PASS if h else FAIL, w) for j, h, w in pairs)
    n_eff = effective_n([w for _, _, w in pairs])
    ci = None
    if kappa is not None and n_eff > 0:
        half = Z95 * math.sqrt(po * (1 - po) / (n_eff * (1 - pe) ** 2))
        ci = [round(max(-1.0, kappa - half), 4), round(min(1.0, kappa + half), 4)]
    false_acceptance = _rate(pairs, given_human=False)
    false_rejection = _rate(pairs, given_human=True)
    recalls = [1 - r["rate"] for r in (false_acceptance, false_rejection) if r["rate"] is not None]
    return {
        "kappa": None if kappa is None else round(kappa, 4),
        "ci95": ci,
        "balanced_accuracy": round(sum(recalls) / len(recalls), 4) if recalls else None,
        "n": len(pairs),
        "effective_n": round(n_eff, 2),
        "confusion": {k: round(v, 4) for k, v in cells.items()},
        "false_acceptance": false_acceptance,
        "false_rejection": false_rejection,
    }


def claim_pairs(items: Iterable[Reviewed]) -> list[tuple[bool, bool, float]]:
    pairs = []
    for item in items:
        for index, label in sorted(item.first().items()):
            if 0 <= index < len(item.judge_verdicts):
                judged = verdict_passes(item.judge_verdicts[index])
                pairs.append((judged, verdict_passes(label), item.weight))
    return pairs


def answer_pairs(items: Iterable[Reviewed]) -> list[tuple[bool, bool, float]]:
    pairs = []
    for item in items:
        labels = item.first()
        if labels and item.judge_verdicts:
            judged = all(verdict_passes(v) for v in item.judge_verdicts)
            pairs.append((judged, all(verdict_passes(v) for v in labels.values()), item.weight))
    return pairs


def reviewers(items: Iterable[Reviewed]) -> dict[str, Any]:
    """κ between the first two reviewers over the claims both labelled (unweighted: it
    measures the labels, not production)."""
    pairs: list[tuple[str, str, float]] = []
    for item in items:
        if len(item.labels) < 2:
            continue
        first, second = list(item.labels.values())[:2]
        pairs.extend((first[i], second[i], 1.0) for i in sorted(first) if i in second)
    kappa, _, _ = cohen_kappa(pairs)
    return {"kappa": None if kappa is None else round(kappa, 4), "n": len(pairs)}


def _segments(items: Sequence[Reviewed], dimensions: Sequence[str]) -> list[dict[str, Any]]:
    groups: dict[tuple[str, str], list[Reviewed]] = defaultdict(list)
    for item in items:
        for name in dimensions:
            if item.segment.get(name):
                groups[(name, item.segment[name])].append(item)
    return [
        {
            "segment": f"{name}={value}",
            "claim_level": binary(claim_pairs(members)),
            "answer_level": binary(answer_pairs(members)),
        }
        for (name, value), members in sorted(groups.items())
    ]


def agreement(items: Sequence[Reviewed], dimensions: Sequence[str]) -> dict[str, Any]:
    """The ``faithmon review agreement`` figures: per judge configuration, overall and per
    segment, at claim and answer level; and between reviewers."""
    by_judge: dict[str, list[Reviewed]] = defaultdict(list)
    for item in items:
        by_judge[item.judge].append(item)
    return {
        "judges": [
            {
                "judge": judge,
                "claim_level": binary(claim_pairs(members)),
                "answer_level": binary(answer_pairs(members)),
                "segments": _segments(members, dimensions),
            }
            for judge, members in sorted(by_judge.items())
        ],
        "reviewers": reviewers(items),
    }
