"""Thresholds from the false-alarm budget, and which segments fold into their overall."""

from __future__ import annotations

from collections.abc import Mapping

from ..model import Baseline, baseline_for
from .arl import delay_of, threshold_for
from .config import DAYS_30, STREAMS, DriftConfig, detector_key


def thresholds(
    streams: Mapping[str, tuple[Mapping[str, str], float]],
    baselines: Mapping[str, Baseline],
    config: DriftConfig,
    partitions: Mapping[str, str] | None = None,
    cited: Mapping[str, float] | None = None,
    measured: Mapping[str, float] | None = None,
) -> dict[str, tuple[float, float, bool]]:
    """detector key → (threshold, expected delay in records, folded).

    ``streams`` maps segment key → (segment, records per day). ``partitions`` maps a
    segment key to the key of its partition's overall (``tenant=T``); a segment it does
    not name is in the partition whose overall is ``""``. A segment without a baseline
    of its own is sized on its partition's overall's. Each partition's overall never
    folds; its segments fold into it. ``cited`` maps segment key → records per day whose
    answer cites: a segment it does not name, or one with no citation baseline, has no
    citation detector (and takes no share). ``measured`` is the same for the retrieval
    stream: records per day whose context relevance was measured.

    One budget for every partition: the operator's false alarms per 30 days, split
    evenly across the detectors that are not folded. Folding frees budget for the rest,
    so one more pass settles it.
    """
    partitions = partitions or {}
    subsets = {"citation": cited or {}, "retrieval": measured or {}}
    detectors = []
    for key, (segment, per_day) in streams.items():
        root = partitions.get(key, "")
        for stream in STREAMS:
            found = baseline_for(stream, baselines, key, root)
            subset = subsets.get(stream)
            traffic = subset.get(key, 0.0) if subset is not None else per_day
            if found is not None and (traffic > 0 or subset is None):
                detectors.append((stream, key, segment, traffic, root, found[0]))
    folded: set[str] = set()
    result: dict[str, tuple[float, float, bool]] = {}
    for _ in range(2):
        active = max(1, len(detectors) - len(folded))
        share = config.false_alarms / active
        result = {}
        for stream, key, segment, per_day, root, baseline in detectors:
            dkey = detector_key(stream, segment)
            q0 = baseline.rate_of(stream)
            q1 = min(q0 + config.shift_of(stream), 0.99)
            spread = baseline.in_control_spread(stream, config.wobble, config.shift_of(stream))
            if config.threshold is not None:
                h = config.threshold
            elif dkey in config.calibrated:
                h = config.calibrated[dkey]
            else:
                h = threshold_for(q0, q1, per_day * DAYS_30 / share, spread=spread)
            delay = delay_of(q0, q1, h)
            too_slow = key != root and delay > per_day * config.max_delay_days
            result[dkey] = (h, delay, too_slow)
        now_folded = {k for k, (_, _, f) in result.items() if f}
        if now_folded == folded:
            break
        folded = now_folded
    return result
