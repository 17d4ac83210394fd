"""How far to trust an offline verdict: calibrated per rule that reached it.

``of(basis, verdict)`` is the share of claims that one rule decided (the ``basis``:
``verbatim``, ``record``, ``value``, ``negation`` ...) whose verdict agreed with the
human labels on the tuning half of ``../shared/data/faithfulness`` (RAGTruth span
labels: a supported claim is right when its sentence overlaps no labelled span, an
unsupported or contradicted one when it overlaps one), with add-one smoothing, for
pairs seen on at least 30 claims there. The support-score rules are binned by the score
over the threshold (``novelty<=0.5``).
``bench/judge_quality.py --fit`` prints the table again; the held-out half checks it
(its reliability table).
"""

from __future__ import annotations

# (basis, verdict) → P(verdict is right); fitted by bench/judge_quality.py --fit.
TABLE: dict[tuple[str, str], float] = {
    ("hours", "supported"): 0.971,
    ("novelty<=0", "supported"): 0.976,
    ("novelty<=0.25", "supported"): 0.983,
    ("novelty<=0.5", "supported"): 0.965,
    ("novelty<=0.75", "supported"): 0.933,
    ("novelty<=1", "supported"): 0.861,
    ("novelty<=1.5", "unsupported"): 0.257,
    ("novelty=inf", "unsupported"): 0.212,
    ("partial", "partial"): 0.212,
    ("record", "contradicted"): 0.756,
    ("verbatim", "supported"): 0.978,
}
DEFAULT = 0.5
"""For a (basis, verdict) pair with fewer than 30 claims on the tuning half (the
binding, polarity, state and added-part checks of ``strict``, most record and number
verdicts): too few to fit, so uncertain, and the cascade asks the LLM about them."""


def of(basis: str, verdict: str) -> float:
    """The calibrated probability that ``verdict``, reached by rule ``basis``, is right."""
    return TABLE.get((basis, verdict), DEFAULT)
