"""Post-stratified sampling weights: how many production records each outcome stands for.

A record kept by the ratio (or a segment's minimum) stands for every record of its
segment and hour that the ratio or a rate limit dropped too; a record kept by a
keep-always rule stands for itself (weight 1), since every record matching the rule
was kept. This post-stratification is what makes rates unbiased when rules keep the
bad records more often. The store keeps the sampler's hourly counts; the weights are
computed here, from them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from datetime import datetime

from ..model import Outcome, SamplingTally, segment_key

ORDINARY = ("sampled", "rule:minimum")
"""Kept with no regard to content: the stratum the sampling ratio applies to."""
DROPPED_ORDINARY = ("sampled_out", "rate_limited")
REASONS = ORDINARY + DROPPED_ORDINARY
"""The sampling decisions the weights are made of (ask the store for these counts)."""

Weights = Mapping[datetime, Sequence[tuple[Mapping[str, str], float]]]


def sampling_weights(
    tallies: Iterable[SamplingTally],
) -> dict[datetime, list[tuple[dict[str, str], float]]]:
    """hour → [(sampling segment, weight of its ordinary records)]."""
    counts: dict[tuple[datetime, str], tuple[dict[str, str], list[int]]] = {}
    for tally in tallies:
        if tally.reason not in REASONS:
            continue
        key = (tally.hour, segment_key(tally.segment))
        _, seen_kept = counts.setdefault(key, (dict(tally.segment), [0, 0]))
        seen_kept[0] += tally.count
        if tally.reason in ORDINARY:
            seen_kept[1] += tally.count
    weights: dict[datetime, list[tuple[dict[str, str], float]]] = {}
    for (hour, _), (segment, (seen, kept)) in counts.items():
        if kept:
            weights.setdefault(hour, []).append((segment, seen / kept))
    return weights


def weight_of(outcome: Outcome, weights: Weights) -> float:
    if outcome.sample_reason not in ORDINARY:
        return 1.0
    hour = outcome.at.replace(minute=0, second=0, microsecond=0)
    for segment, weight in weights.get(hour, ()):
        if all(outcome.labels.get(k) == v for k, v in segment.items()):
            return weight
    return 1.0


def weigh(outcomes: Sequence[Outcome], tallies: Iterable[SamplingTally]) -> list[Outcome]:
    """The outcomes, each with the weight its sampling stratum gives it."""
    weights = sampling_weights(tallies)
    weighed = []
    for outcome in outcomes:
        weight = weight_of(outcome, weights)
        weighed.append(outcome if weight == outcome.weight else replace(outcome, weight=weight))
    return weighed
