"""How far to trust an offline verdict: calibrated per rule that reached it.

``of(basis, verdict)`` is the share of claims that one rule decided (the ``basis``:
``verbatim``, ``record``, ``value``, ``negation`` ...) whose verdict agreed with the
human labels on the tuning half of ``../shared/data/faithfulness`` (RAGTruth span
labels: a supported claim is right when its sentence overlaps no labelled span, an
unsupported or contradicted one when it overlaps one), with add-one smoothing. The
support-score rules are binned by the score over the threshold (``novelty<=0.5``).
``bench/judge_quality.py --fit`` prints the table again; the held-out half checks it
(its reliability table).
"""

from __future__ import annotations

# (basis, verdict) → P(verdict is right); fitted by bench/judge_quality.py --fit.
TABLE: dict[tuple[str, str], float] = {
    ("clause_negation", "contradicted"): 0.667,
    ("hours", "contradicted"): 0.889,
    ("hours", "supported"): 0.971,
    ("hours", "unsupported"): 0.667,
    ("novelty<=0", "supported"): 0.975,
    ("novelty<=0.25", "supported"): 0.982,
    ("novelty<=0.5", "supported"): 0.966,
    ("novelty<=0.75", "supported"): 0.939,
    ("novelty<=1", "supported"): 0.863,
    ("novelty<=1.5", "unsupported"): 0.222,
    ("novelty<=2.5", "unsupported"): 0.345,
    ("novelty=inf", "unsupported"): 0.241,
    ("novelty>2.5", "unsupported"): 0.667,
    ("number", "contradicted"): 0.200,
    ("number", "unsupported"): 0.786,
    ("record", "contradicted"): 0.766,
    ("record", "unsupported"): 0.824,
    ("verbatim", "supported"): 0.976,
}
DEFAULT = 0.5
"""For a (basis, verdict) pair the tuning data never showed: rival names
(``binding``), over-reach and sentence-level ``negation`` did not fire on the tuning
half."""


def of(basis: str, verdict: str) -> float:
    """The calibrated probability that ``verdict``, reached by rule ``basis``, is right."""
    return TABLE.get((basis, verdict), DEFAULT)
