"""Frozen baselines: the window they are taken from, their rates and in-control spread."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from ..model import Outcome, segment_key
from .config import MIN_RATE, DriftConfig, Stream


@dataclass(frozen=True, slots=True)
class Baseline:
    records: int
    unsupported: int
    critical: int = 0
    spread: float = 0.0
    """How much the unsupported rate moved within the window beyond binomial noise (SD)."""
    critical_spread: float = 0.0

    def rate_of(self, stream: Stream) -> float:
        count = self.unsupported if stream == "unsupported" else self.critical
        return max(MIN_RATE, (count + 0.5) / (self.records + 1))

    def in_control_spread(self, stream: Stream, wobble: float, shift: float) -> float:
        """SD of the rate a detector sees while nothing is wrong: the baseline's own
        estimation error, and its wobble (measured, but at least ``wobble`` × rate).

        At most a quarter of the design shift: past that a small baseline is too
        uncertain for any threshold to be both quiet and useful, and the budget is
        not kept (`faithmon drift calibrate` can refine it once history accrues).
        """
        q0 = self.rate_of(stream)
        moved = self.spread if stream == "unsupported" else self.critical_spread
        spread = math.sqrt(max(moved, wobble * q0) ** 2 + q0 * (1 - q0) / (self.records + 1))
        return min(spread, shift / 4)

    @property
    def rate(self) -> float:
        return self.rate_of("unsupported")


def wilson_interval(successes: float, trials: float, z: float = 1.96) -> tuple[float, float]:
    """95% Wilson score interval of a rate (sensible even at 0 or n successes)."""
    if trials <= 0:
        return 0.0, 1.0
    p = min(1.0, max(0.0, successes / trials))
    denominator = 1 + z * z / trials
    centre = (p + z * z / (2 * trials)) / denominator
    half = z * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials)) / denominator
    return max(0.0, centre - half), min(1.0, centre + half)


def segments_of(labels: Mapping[str, str], dimensions: Sequence[str]) -> list[dict[str, str]]:
    """The overall segment plus one segment per monitored label the record has."""
    return [{}] + [{d: labels[d]} for d in dimensions if labels.get(d)]


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


@dataclass(slots=True)
class SegmentOutcomes:
    """One segment's outcomes after the baseline window, and how much traffic it has."""

    segment: dict[str, str]
    outcomes: list[Outcome]
    """Its records after the baseline window."""
    first_at: datetime
    seen: int = 0
    """All its records, the window's included: its traffic is measured on them."""
