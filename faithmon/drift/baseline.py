"""Baselines to freeze: the window they are taken from, their weighted counts and wobble."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from ..model import Baseline, FrozenBaselines, Outcome, Stream, segment_key, segments_of
from .config import DriftConfig


def wilson_interval(successes: float, trials: float, z: float = 1.96) -> tuple[float, float]:
    """95% Wilson score interval of a rate (sensible even at 0 or n successes)."""
    if trials <= 0:
        return 0.0, 1.0
    p = min(1.0, max(0.0, successes / trials))
    denominator = 1 + z * z / trials
    centre = (p + z * z / (2 * trials)) / denominator
    half = z * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials)) / denominator
    return max(0.0, centre - half), min(1.0, centre + half)


def in_segment(outcome: Outcome, segment: Mapping[str, str]) -> bool:
    return all(outcome.labels.get(k) == v for k, v in segment.items())


def is_bad(outcome: Outcome, stream: Stream) -> bool:
    return outcome.unsupported if stream == "unsupported" else outcome.critical


def baseline_window(
    outcomes: Sequence[Outcome], config: DriftConfig
) -> tuple[datetime, datetime] | None:
    """The window the baseline is built from, once the data covers it; else None."""
    if len(outcomes) < config.baseline_records:
        return None
    start = outcomes[0].at
    end = max(
        outcomes[config.baseline_records - 1].at, start + timedelta(days=config.baseline_days)
    )
    if outcomes[-1].at < end:
        return None
    return start, end


BUCKETS = 12
"""Consecutive equal-count stretches of the baseline window its wobble is measured on."""


def excess_spread(items: Sequence[tuple[float, bool]]) -> float:
    """SD of the rate across consecutive stretches of (weight, bad), beyond binomial noise."""
    chunks = min(BUCKETS, len(items) // 30)
    if chunks < 4:
        return 0.0
    size = len(items) // chunks
    rates, sizes = [], []
    for c in range(chunks):
        part = items[c * size : (c + 1) * size] if c < chunks - 1 else items[c * size :]
        weight = sum(w for w, _ in part)
        rates.append(sum(w for w, bad in part if bad) / weight if weight else 0.0)
        sizes.append(len(part))
    mean = sum(r * n for r, n in zip(rates, sizes, strict=True)) / sum(sizes)
    observed = sum((r - mean) ** 2 for r in rates) / (chunks - 1)
    noise = mean * (1 - mean) * sum(1 / n for n in sizes) / chunks
    # One standard error of the variance estimate below the point: a steady window
    # reads as steady (the wobble floor covers it) rather than as chance spread.
    return math.sqrt(max(0.0, observed - noise * (1 + math.sqrt(2 / (chunks - 1)))))


def compute_baselines(
    outcomes: Sequence[Outcome], window_end: datetime, config: DriftConfig
) -> dict[str, Baseline]:
    """Per segment: records, sampling-weighted bad counts scaled to those records, and
    how much each rate wobbled within the window."""
    items: dict[str, list[Outcome]] = {}
    for outcome in outcomes:
        if outcome.at > window_end:
            break
        for segment in segments_of(outcome.labels, config.dimensions):
            items.setdefault(segment_key(segment), []).append(outcome)
    result = {}
    for key, group in items.items():
        n = len(group)
        if key != "" and n < config.segment_min_baseline:
            continue
        w = sum(o.weight for o in group)
        u = sum(o.weight for o in group if o.unsupported)
        c = sum(o.weight for o in group if o.critical)
        result[key] = Baseline(
            n,
            round(u / w * n),
            round(c / w * n),
            round(excess_spread([(o.weight, o.unsupported) for o in group]), 5),
            round(excess_spread([(o.weight, o.critical) for o in group]), 5),
        )
    return result


def freeze(outcomes: Sequence[Outcome], config: DriftConfig) -> FrozenBaselines | None:
    """The baselines to freeze, once the outcomes cover the baseline window; else None."""
    window = baseline_window(outcomes, config)
    if window is None:
        return None
    return FrozenBaselines(*window, compute_baselines(outcomes, window[1], config))


@dataclass(slots=True)
class SegmentOutcomes:
    """One segment's outcomes after the baseline window, and how much traffic it has."""

    segment: dict[str, str]
    outcomes: list[Outcome]
    """Its records after the baseline window."""
    first_at: datetime
    seen: int = 0
    """All its records, the window's included: its traffic is measured on them."""
