"""Baselines to freeze: the windows they are taken from, their weighted counts and wobble.

The judge configuration's first window is found over all its records, as ever. Each
partition (see :attr:`.config.DriftConfig.partition`) with at least
``segment_min_baseline`` records in it freezes there; one with fewer, or first seen
later (a new tenant), freezes over a window of its own once its records span
``baseline_days`` and number ``segment_min_baseline``. No partition's baseline is ever
taken from another's records, and none waits on another's.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import replace
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
    how much each rate wobbled within the window. Each partition's overall is kept
    whatever its size; other segments need ``segment_min_baseline`` records."""
    return {
        key: baseline for key, (_, baseline) in _baselines(outcomes, window_end, config).items()
    }


def _baselines(
    outcomes: Sequence[Outcome], window_end: datetime, config: DriftConfig
) -> dict[str, tuple[str, Baseline]]:
    """Segment key → (the key of its partition's overall, its baseline)."""
    items: dict[str, tuple[str, list[Outcome]]] = {}
    for outcome in outcomes:
        if outcome.at > window_end:
            break
        root = segment_key(config.partition_of(outcome.labels))
        for segment in segments_of(outcome.labels, config.dimensions, config.partition):
            items.setdefault(segment_key(segment), (root, []))[1].append(outcome)
    result = {}
    for key, (root, group) in items.items():
        n = len(group)
        if key != root and n < config.segment_min_baseline:
            continue
        w = sum(o.weight for o in group)
        u = sum(o.weight for o in group if o.unsupported)
        c = sum(o.weight for o in group if o.critical)
        result[key] = (
            root,
            Baseline(
                n,
                round(u / w * n),
                round(c / w * n),
                round(excess_spread([(o.weight, o.unsupported) for o in group]), 5),
                round(excess_spread([(o.weight, o.critical) for o in group]), 5),
                *_subset(group, "citation", config),
                *_subset(group, "retrieval", config),
            ),
        )
    return result


def _subset(
    group: Sequence[Outcome], stream: Stream, config: DriftConfig
) -> tuple[int, int, float]:
    """(observed, bad, spread) over the records ``stream`` observes (those that cite, or
    whose relevance was measured); none below ``segment_min_baseline`` of them, where a
    rate would rest on a handful of answers."""
    seen = [o for o in group if o.observes(stream)]
    n = len(seen)
    if n < config.segment_min_baseline:
        return 0, 0, 0.0
    w = sum(o.weight for o in seen)
    bad = sum(o.weight for o in seen if o.is_bad(stream))
    spread = excess_spread([(o.weight, o.is_bad(stream)) for o in seen])
    return n, round(bad / w * n), round(spread, 5)


def partitions(
    outcomes: Sequence[Outcome], config: DriftConfig
) -> dict[str, tuple[dict[str, str], list[Outcome]]]:
    """Partition overall key → (that overall, its outcomes in order)."""
    result: dict[str, tuple[dict[str, str], list[Outcome]]] = {}
    for outcome in outcomes:
        root = config.partition_of(outcome.labels)
        result.setdefault(segment_key(root), (root, []))[1].append(outcome)
    return result


def freeze(
    outcomes: Sequence[Outcome], config: DriftConfig, frozen: FrozenBaselines | None = None
) -> FrozenBaselines | None:
    """``frozen`` (the baselines frozen so far) with those of every partition that can
    freeze now; None while nothing can (the first window is not complete yet).

    With no partition label, or records of one partition only, this is one window
    over all the records, frozen once: what it always was.
    """
    segments = dict(frozen.segments) if frozen is not None else {}
    windows = {key: frozen.window_of(key) for key in segments} if frozen is not None else {}
    if frozen is None:
        first = baseline_window(outcomes, config)
        if first is None:
            return None
        found = _baselines(outcomes, first[1], config)
        alone = len({root for root, _ in found.values()}) == 1
        for key, (root, baseline) in found.items():
            # A partition with too few records here waits for a window of its own; the
            # only partition is all the records, and freezes whatever its size.
            if alone or found[root][1].records >= config.segment_min_baseline:
                segments[key], windows[key] = baseline, first
    own = replace(config, baseline_records=config.segment_min_baseline)
    for root, (_, items) in partitions(outcomes, config).items():
        if root in segments:
            continue
        window = baseline_window(items, own)
        if window is None:
            continue
        for key, baseline in compute_baselines(items, window[1], config).items():
            segments[key], windows[key] = baseline, window
    if frozen is not None and len(segments) == len(frozen.segments):
        return frozen
    return FrozenBaselines.of(segments, windows) if segments else None
