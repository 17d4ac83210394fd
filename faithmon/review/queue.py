"""Which evaluations go to people, why, how urgently, and with what probability.

Every scored evaluation falls in one stratum, the first that applies:

| reason | when | probability | priority |
| --- | --- | --- | --- |
| ``critical`` | a critical claim is not supported | 1 | 0 |
| ``cascade_overruled`` | the LLM settled a claim against the offline judge's lean | 1 | 1 |
| ``guard_band`` | the score is inside the guard band of the judge's calibrated threshold | 1 | 1 |
| ``low_score`` | a claim is not supported | ``low_share`` | 2 |
| ``high_score`` | every claim is supported | ``sample_rate`` | 3 |

(priority 0 is served first). ``sample_rate`` 1 queues every evaluation. The pick is
deterministic in the trace id, so two workers agree and a rerun picks the same; the
probability is kept with the item, so agreement figures can weigh each reviewed item by
its inverse and stand for all traffic, not for the queue's mix (the high-score sample is
what lets false acceptance be estimated). A share ``double_share`` of items wants two
reviewers, for inter-reviewer agreement. Evaluations without claims or scores are not
reviewed.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from ..model import Judgement
from ..model.judgement import OVERRULED_OFFLINE


@dataclass(frozen=True, slots=True)
class QueuePolicy:
    sample_rate: float = 0.02
    """Share of all-supported evaluations reviewed; 1 queues every evaluation."""
    low_share: float = 0.25
    """Share of evaluations with an unsupported (not critical) claim reviewed."""
    double_share: float = 0.1
    """Share of items that want a second reviewer."""


@dataclass(frozen=True, slots=True)
class Pick:
    reason: str
    priority: int
    inclusion_probability: float
    reviews: int
    """How many reviewers the item wants (1, or 2 for inter-reviewer agreement)."""


def _draw(trace_id: str, salt: str) -> float:
    """A uniform number in [0, 1) fixed by the trace id."""
    digest = hashlib.sha256(f"{salt}:{trace_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def pick(
    trace_id: str,
    judgement: Judgement,
    policy: QueuePolicy,
    band: tuple[float, float] | None = None,
) -> Pick | None:
    """Whether the evaluation goes to review, and as what (see the module docstring);
    ``band`` is the guard band ``[low, high)`` of the judge's threshold in use, if any."""
    score = judgement.faithfulness
    if score is None:
        return None
    everything = policy.sample_rate >= 1
    if judgement.critical_unsupported:
        reason, priority, probability = "critical", 0, 1.0
    elif any(OVERRULED_OFFLINE in c.flags for c in judgement.claims):
        reason, priority, probability = "cascade_overruled", 1, 1.0
    elif band is not None and band[0] <= score < band[1]:
        # Too close to the threshold for a verdict: people decide.
        reason, priority, probability = "guard_band", 1, 1.0
    elif judgement.unsupported:
        reason, priority = "low_score", 2
        probability = 1.0 if everything else max(policy.low_share, policy.sample_rate)
    else:
        reason, priority, probability = "high_score", 3, min(1.0, policy.sample_rate)
    if probability <= 0 or _draw(trace_id, "review") >= probability:
        return None
    reviews = 2 if _draw(trace_id, "double") < policy.double_share else 1
    return Pick(reason, priority, probability, reviews)
