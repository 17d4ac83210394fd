"""Drift detection: CUSUM, the baseline window, baselines per segment, detection, attribution."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta

import pytest

from faithmon.drift import (
    RULE,
    Baseline,
    DriftConfig,
    Reading,
    baseline_window,
    compute_baselines,
    cusum,
    detect,
    increments,
)
from faithmon.model import Outcome

T0 = datetime(2026, 3, 1, tzinfo=UTC)
STEP = timedelta(minutes=5)
ROUTES = ("a", "b", "c")


@pytest.fixture
def config() -> DriftConfig:
    """Small-scale settings: 300 records and one day of baseline, h = 5."""
    return DriftConfig(
        dimensions=("model", "route"),
        threshold=5.0,
        shift=0.1,
        baseline_records=300,
        baseline_days=1.0,
        segment_min_baseline=50,
    )


def outcome(i: int, model: str, route: str, unsupported: bool) -> Outcome:
    claims = ("an invented claim",) if unsupported else ()
    return Outcome(
        f"t{i:04d}", T0 + i * STEP, {"model": model, "route": route}, unsupported, claims
    )


@pytest.fixture
def baseline_outcomes() -> list[Outcome]:
    """300 records of model m1 over three routes, one in fifty unsupported, 5 minutes apart."""
    return [outcome(i, "m1", ROUTES[i % 3], i % 50 == 0) for i in range(300)]


@pytest.fixture
def stable_outcomes(baseline_outcomes: list[Outcome]) -> list[Outcome]:
    """The baseline followed by 300 more records just like it."""
    more = [outcome(i, "m1", ROUTES[i % 3], i % 50 == 0) for i in range(300, 600)]
    return baseline_outcomes + more


@pytest.fixture
def drifting_outcomes(baseline_outcomes: list[Outcome]) -> list[Outcome]:
    """The baseline, then half the traffic moves to model m2, unsupported every other time."""
    after = []
    for j in range(300):
        i = 300 + j
        if j % 2 == 0:
            after.append(outcome(i, "m1", ROUTES[j % 3], i % 50 == 0))
        else:
            after.append(outcome(i, "m2", ROUTES[j % 3], (j // 2) % 2 == 0))
    return baseline_outcomes + after


def unsupported(readings: list[Reading]) -> list[Reading]:
    """The readings of the unsupported-claim stream (detect also runs the critical one)."""
    return [r for r in readings if r.stream == "unsupported"]


def test_cusum_matches_a_hand_computation() -> None:
    """Three steps of the Bernoulli CUSUM equal the formula worked by hand, with the
    upward step rounded to a whole number of quarter downward steps."""
    down = math.log(0.8 / 0.9)
    grid = -down / 4
    up = round(math.log(0.2 / 0.1) / grid) * grid

    statistic, start = cusum([True, False, True], 0.1, 0.2)

    assert round(math.log(0.2 / 0.1) / grid) == 24
    assert statistic == pytest.approx(max(0.0, max(0.0, up + down) + up))
    assert statistic == pytest.approx(1.295613, abs=1e-6)
    assert start == 0


def test_cusum_restarts_after_returning_to_zero() -> None:
    """Once S falls back to zero, the change point moves to where it rises again."""
    ys = [True] + [False] * 10 + [True, True]

    statistic, start = cusum(ys, 0.1, 0.2)

    up, _ = increments(0.1, 0.2)
    assert start == 11
    assert statistic == pytest.approx(2 * up)


def test_cusum_without_bad_outcomes_stays_at_zero() -> None:
    """All-good outcomes keep S at zero and give no change point."""
    assert cusum([False] * 20, 0.1, 0.2) == (0.0, None)
    assert cusum([], 0.1, 0.2) == (0.0, None)


def test_baseline_window_needs_enough_days(config: DriftConfig) -> None:
    """Enough records within less than baseline_days give no window yet."""
    minutes = [Outcome(f"t{i}", T0 + timedelta(minutes=i), {}, False) for i in range(400)]

    assert baseline_window(minutes, config) is None


def test_baseline_window_needs_enough_records(config: DriftConfig) -> None:
    """Many days but fewer than baseline_records records give no window yet."""
    daily = [
        Outcome(f"t{i}", T0 + timedelta(days=i), {}, False)
        for i in range(config.baseline_records - 1)
    ]

    assert baseline_window(daily, config) is None


def test_baseline_window_ends_at_the_later_requirement(config: DriftConfig) -> None:
    """The window ends at baseline_days or at the baseline_records-th record, whichever is later."""
    slow = [Outcome(f"t{i}", T0 + timedelta(hours=i), {}, False) for i in range(400)]
    fast = [Outcome(f"t{i}", T0 + timedelta(minutes=i), {}, False) for i in range(2000)]

    assert baseline_window(slow, config) == (T0, T0 + timedelta(hours=299))
    assert baseline_window(fast, config) == (T0, T0 + timedelta(days=1))


def test_compute_baselines_drops_small_segments_but_keeps_overall() -> None:
    """Segments under segment_min_baseline are left out; the overall baseline always stays."""
    config = DriftConfig(dimensions=("model", "route"), segment_min_baseline=5)
    outcomes = [outcome(i, "m1", "a" if i < 8 else "b", i == 0) for i in range(10)]
    outcomes.append(outcome(50, "m1", "b", True))

    baselines = compute_baselines(outcomes, outcomes[9].at, config)

    assert baselines == {
        "": Baseline(10, 1),
        "model=m1": Baseline(10, 1),
        "route=a": Baseline(8, 1),
    }
    tiny = DriftConfig(dimensions=("model",), segment_min_baseline=1000)
    assert compute_baselines(outcomes, outcomes[9].at, tiny) == {"": Baseline(10, 1)}


def test_baseline_rate_is_jeffreys_and_floored() -> None:
    """The rate is (u + 0.5) / (n + 1), never below MIN_RATE."""
    assert Baseline(99, 9).rate == pytest.approx(0.095)
    assert Baseline(10_000, 0).rate == 0.01


def test_no_drift_means_every_segment_is_ok(
    stable_outcomes: list[Outcome], config: DriftConfig
) -> None:
    """Records like the baseline leave every segment ok."""
    window = baseline_window(stable_outcomes, config)
    assert window is not None
    baselines = compute_baselines(stable_outcomes, window[1], config)

    readings = unsupported(detect(stable_outcomes, baselines, window[1], config))

    assert [r.segment for r in readings] == [
        {},
        {"model": "m1"},
        {"route": "a"},
        {"route": "b"},
        {"route": "c"},
    ]
    assert {r.level for r in readings} == {"ok"}
    assert all(r.baseline_source == "own" for r in readings)
    assert all(r.records > 0 for r in readings)


def test_new_segment_uses_the_overall_baseline(
    drifting_outcomes: list[Outcome], config: DriftConfig
) -> None:
    """A model absent from the baseline window is compared with the overall baseline."""
    window = baseline_window(drifting_outcomes, config)
    assert window is not None
    baselines = compute_baselines(drifting_outcomes, window[1], config)
    assert "model=m2" not in baselines

    readings = {
        tuple(r.segment.items()): r
        for r in unsupported(detect(drifting_outcomes, baselines, window[1], config))
    }

    m2 = readings[(("model", "m2"),)]
    assert m2.baseline_source == "overall"
    assert m2.baseline == baselines[""]
    assert readings[(("model", "m1"),)].baseline_source == "own"


def test_drifting_model_fires_and_explains_its_routes(
    drifting_outcomes: list[Outcome], config: DriftConfig
) -> None:
    """The bad model fires; the routes and overall segment it drags along are explained by it."""
    window = baseline_window(drifting_outcomes, config)
    assert window is not None
    baselines = compute_baselines(drifting_outcomes, window[1], config)

    readings = {
        tuple(r.segment.items()): r
        for r in unsupported(detect(drifting_outcomes, baselines, window[1], config))
    }

    m2 = readings[(("model", "m2"),)]
    assert m2.level == "firing"
    assert m2.explained_by is None
    assert m2.signal().level == "firing"
    assert m2.signal().rule == RULE
    assert 0 < len(m2.examples) <= 3
    assert readings[(("model", "m1"),)].level == "ok"
    for key in [(("route", r),) for r in ROUTES] + [()]:
        reading = readings[key]
        assert reading.level != "ok"
        assert reading.explained_by == {"model": "m2"}
        signal = reading.signal()
        assert signal.level == "ok"
        assert signal.details["explained_by"] == {"model": "m2"}


def test_change_at_points_at_the_first_drifting_outcome(
    drifting_outcomes: list[Outcome], config: DriftConfig
) -> None:
    """The change point of the bad model is its first record after the window, or close to it."""
    window = baseline_window(drifting_outcomes, config)
    assert window is not None
    baselines = compute_baselines(drifting_outcomes, window[1], config)

    readings = unsupported(detect(drifting_outcomes, baselines, window[1], config))

    m2 = next(r for r in readings if r.segment == {"model": "m2"})
    first_m2 = [o.at for o in drifting_outcomes if o.labels["model"] == "m2"]
    assert m2.change_at is not None
    assert first_m2[0] <= m2.change_at <= first_m2[3]
    assert m2.signal().details["change_at"] == m2.change_at.isoformat()
