"""The ``judge_disagreement`` signal: a judge configuration whose answer-level agreement with
the reviewers (Cohen's κ, weighted as :mod:`.agreement` weighs) falls under a bound once
enough answers are labelled; it carries the worst disagreements as examples (those
standing for the most traffic first, false acceptances before false rejections)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..model import Signal
from ..model.review import Reviewed
from .agreement import answer_pairs, binary, verdict_passes

RULE = "judge_disagreement"


def _examples(items: Sequence[Reviewed], limit: int = 5) -> list[dict[str, Any]]:
    worst = []
    for item in items:
        labels = item.first()
        if not labels or not item.judge_verdicts:
            continue
        judged = all(verdict_passes(v) for v in item.judge_verdicts)
        human = all(verdict_passes(v) for v in labels.values())
        if judged == human:
            continue
        claims = [
            {"index": i, "judge": item.judge_verdicts[i], "reviewer": label}
            for i, label in sorted(labels.items())
            if i < len(item.judge_verdicts)
            and verdict_passes(item.judge_verdicts[i]) != verdict_passes(label)
        ]
        kind = "false_acceptance" if judged else "false_rejection"
        worst.append((kind != "false_acceptance", -item.weight, item.trace_id, kind, claims))
    worst.sort(key=lambda w: w[:3])
    return [{"trace_id": t, "kind": k, "claims": c} for _, _, t, k, c in worst[:limit]]


def disagreement_signal(
    judge: str, items: Sequence[Reviewed], min_kappa: float, min_labels: int
) -> Signal:
    mine = [i for i in items if i.judge == judge]
    figures = binary(answer_pairs(mine))
    kappa = figures["kappa"]
    firing = figures["n"] >= min_labels and kappa is not None and kappa < min_kappa
    details: dict[str, Any] = {
        "kappa": kappa,
        "kappa_ci95": figures["ci95"],
        "answers": figures["n"],
        "bound": min_kappa,
        "false_acceptance": figures["false_acceptance"]["rate"],
        "false_rejection": figures["false_rejection"]["rate"],
    }
    if firing:
        details["examples"] = _examples(mine)
    return Signal(RULE, {"judge": judge}, "firing" if firing else "ok", details, "warning")
