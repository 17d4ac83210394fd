"""With no tenant label on any record, drift is what it was before partitions: the
figures below were computed by the detectors before they knew of tenants, on the same
stream (weights, a drifting model, a thin route that folds, critical claims). The weighted
CUSUMs moved in their later digits when the detectors became a fold (``drift.state``): a
record's step is scaled by the running mean weight, not the mean over every record."""

from __future__ import annotations

import random
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

from faithmon.drift import DriftConfig, calibrate, detect, freeze, restart_points, silences
from faithmon.model import Outcome, segment_key

T0 = datetime(2026, 3, 1, tzinfo=UTC)
CONFIG = DriftConfig(
    dimensions=("service", "route", "tenant", "model"),
    baseline_records=1200,
    baseline_days=2.0,
    segment_min_baseline=60,
    recovery_records=100,
    no_data_hours=3,
    false_alarms=1.0,
)
EXAMPLES = ["02987", "02959", "02947"]
BASELINES = {
    "": (1200, 80, 25, 0.0, 0.0),
    "service=help": (1200, 80, 25, 0.0, 0.0),
    "model=m1": (1200, 80, 25, 0.0, 0.0),
    "route=b": (594, 34, 11, 0.01339, 0.0),
    "route=a": (593, 46, 13, 0.0, 0.0),
}
# segment, stream, level, CUSUM, h, folded, explained by, records, baseline, examples
READINGS = [
    ("", "critical", "firing", 45.759657, 9.975, False, "model=m2", 1800, "own", EXAMPLES),
    ("", "unsupported", "firing", 159.321937, 11.243, False, "model=m2", 1800, "own", EXAMPLES),
    ("model=m1", "critical", "ok", 0.0, 9.602, False, None, 1300, "own", []),
    ("model=m1", "unsupported", "ok", 0.0, 10.847, False, None, 1300, "own", []),
    ("model=m2", "critical", "firing", 58.741375, 8.746, False, None, 500, "overall", EXAMPLES),
    ("model=m2", "unsupported", "firing", 176.681366, 9.908, False, None, 500, "overall", EXAMPLES),
    ("route=a", "critical", "ok", 0.0, 10.993, False, None, 891, "own", []),
    ("route=a", "unsupported", "ok", 0.0, 12.495, False, None, 891, "own", []),
    ("route=b", "critical", "firing", 62.904826, 10.464, False, "model=m2", 891, "own", EXAMPLES),
    (
        "route=b",
        "unsupported",
        "firing",
        193.748646,
        19.867,
        False,
        "model=m2",
        891,
        "own",
        EXAMPLES,
    ),
    ("route=thin", "critical", "ok", 0.113711, 3.424, True, None, 18, "overall", ["02425"]),
    (
        "route=thin",
        "unsupported",
        "pending",
        2.834461,
        4.203,
        True,
        None,
        18,
        "overall",
        ["02425", "02813", "02619"],
    ),
    (
        "service=help",
        "critical",
        "firing",
        45.759657,
        9.975,
        False,
        "model=m2",
        1800,
        "own",
        EXAMPLES,
    ),
    (
        "service=help",
        "unsupported",
        "firing",
        159.321937,
        11.243,
        False,
        "model=m2",
        1800,
        "own",
        EXAMPLES,
    ),
]
RESTARTED = ["", "model=m2", "route=b", "route=thin", "service=help"]
SILENCES = [("", "firing"), ("route=a", "firing"), ("route=b", "firing")]
SILENCES += [("route=thin", "ok"), ("service=help", "firing")]
# detector, threshold, budget threshold, replayed alarms
CALIBRATION = [
    ("unsupported|", 12.598, 12.598, 12),
    ("critical|", 11.257, 11.257, 4),
    ("unsupported|model=m1", 11.86, 11.86, 0),
    ("critical|model=m1", 10.561, 10.561, 0),
    ("unsupported|model=m2", 9.984, 9.984, 17),
    ("critical|model=m2", 8.785, 8.785, 6),
    ("unsupported|route=a", 14.967, 14.967, 0),
    ("critical|route=a", 13.085, 13.085, 0),
    ("unsupported|route=b", 28.527, 28.527, 6),
    ("critical|route=b", 12.324, 12.324, 5),
    ("unsupported|route=thin", 4.924, 4.924, 0),
    ("critical|route=thin", 4.035, 4.035, 0),
    ("unsupported|service=help", 12.598, 12.598, 12),
    ("critical|service=help", 11.257, 11.257, 4),
]


def stream() -> list[Outcome]:
    """3,000 records 3 minutes apart, a fifth kept by a rule (weight 1) and the rest by a
    1-in-4 ratio; from record 2,000 every other one comes from model m2, half of them
    unsupported; one in 97 is on a thin route."""
    rng = random.Random(7)
    outcomes = []
    for i in range(3000):
        model = "m2" if i >= 2000 and i % 2 else "m1"
        route = "thin" if i % 97 == 0 else ("a", "b")[i % 2]
        bad = rng.random() < (0.5 if model == "m2" else 0.06)
        critical = bad and rng.random() < 0.3
        weight = 1.0 if i % 5 == 0 else 4.0
        labels = {"service": "help", "route": route, "model": model}
        claims = ("c",) if bad else ()
        at = T0 + timedelta(minutes=3 * i)
        outcomes.append(Outcome(f"{i:05d}", at, labels, bad, claims, critical, weight))
    return outcomes


def figures(config: DriftConfig) -> dict[str, Any]:
    outcomes = stream()
    frozen = freeze(outcomes, config)
    assert frozen is not None
    readings = detect(outcomes, frozen.segments, frozen.end, config)
    reset = [("unsupported", {"model": "m2"}, outcomes[2500].at)]
    signals, _ = silences(outcomes[:2900], config, outcomes[-1].at + timedelta(hours=4))
    return {
        "window": (frozen.start, frozen.end, frozen.windows),
        "baselines": {
            k: (b.records, b.unsupported, b.critical, b.spread, b.critical_spread)
            for k, b in frozen.segments.items()
        },
        "readings": [
            (
                segment_key(r.segment),
                r.stream,
                r.level,
                round(r.statistic, 6),
                round(r.threshold, 6),
                r.folded,
                segment_key(r.explained_by) if r.explained_by is not None else None,
                r.records,
                r.baseline_source,
                [o.trace_id for o in r.examples],
            )
            for r in readings
        ],
        "partitions": {segment_key(r.partition) for r in readings},
        "restarts": restart_points(outcomes, reset, config.dimensions, config.partition),
        "silences": sorted((segment_key(s.segment), s.level) for s in signals),
        "calibration": [
            (c.detector, c.threshold, c.budget_threshold, c.replay_alarms)
            for c in calibrate(outcomes[1200:], frozen.segments, config, days=2.0)
        ],
    }


def test_without_tenants_every_figure_is_what_it_was() -> None:
    """Baselines, readings (levels, CUSUMs, budget thresholds, folding, attribution,
    examples), restarts, silences and calibration equal the figures from before."""
    got = figures(CONFIG)

    end = T0 + timedelta(days=2, hours=11, minutes=57)
    assert got["window"] == (T0, end, {})
    assert got["baselines"] == BASELINES
    assert got["readings"] == READINGS
    assert got["partitions"] == {""}
    assert got["restarts"] == {
        f"unsupported|{key}": T0 + timedelta(days=5, hours=5) for key in RESTARTED
    }
    assert got["silences"] == SILENCES
    assert got["calibration"] == CALIBRATION


def test_without_tenants_the_tenant_dimension_changes_nothing() -> None:
    """With ``tenant`` among the dimensions or not, records without one read the same."""
    assert CONFIG.partition == "tenant"
    without = replace(CONFIG, dimensions=("service", "route", "model"))
    assert without.partition is None

    assert figures(CONFIG) == figures(without)
