"""Exact run lengths, thresholds from the false-alarm budget, folding, sampling weights,
the critical-claim stream, restarts, silences and calibration."""

from __future__ import annotations

import random
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from faithmon.drift import (
    Baseline,
    DriftConfig,
    alarm_rate,
    calibrate,
    detect,
    detector_key,
    first_alarm,
    run_length,
    silences,
    threshold_for,
    thresholds,
)
from faithmon.model import Outcome

T0 = datetime(2026, 3, 1, tzinfo=UTC)


def simulated_run_length(
    q: float, q0: float, q1: float, h: float, runs: int, seed: int, longest: int
) -> float:
    """Mean records until the production detector's first alarm, by simulation."""
    rng = random.Random(seed)
    total = 0
    for _ in range(runs):
        at = first_alarm([rng.random() < q for _ in range(longest)], q0, q1, h)
        assert at is not None
        total += at + 1
    return total / runs


@pytest.mark.parametrize(("q", "h"), [(0.10, 3.0), (0.25, 4.0), (0.10, 2.0)])
def test_run_length_matches_simulation_of_the_same_detector(q: float, h: float) -> None:
    """The banded Markov chain gives the mean run length that simulation measures."""
    q0, q1 = 0.1, 0.18
    exact = run_length(q, q0, q1, h)
    # Run lengths are roughly geometric: 15 means long, no run outlasts the stream.
    simulated = simulated_run_length(q, q0, q1, h, runs=1500, seed=11, longest=int(15 * exact))
    assert simulated == pytest.approx(exact, rel=0.08)


def test_threshold_for_buys_the_run_length_asked_for() -> None:
    """The threshold's in-control run length is the target; a larger target needs more h."""
    q0, q1 = 0.08, 0.16
    small = threshold_for(q0, q1, 10_000)
    large = threshold_for(q0, q1, 1_000_000)
    assert run_length(q0, q0, q1, small) == pytest.approx(10_000, rel=0.05)
    assert run_length(q0, q0, q1, large) == pytest.approx(1_000_000, rel=0.05)
    assert large > small
    # At a rate above q0 the same run length needs a higher threshold.
    assert threshold_for(q0, q1, 10_000, rate=0.10) > small
    with pytest.raises(ValueError, match="drifts upward"):
        threshold_for(q0, q1, 10_000, rate=0.2)


def test_budget_split_across_more_detectors_raises_each_threshold() -> None:
    """With more segments sharing the budget, each detector needs a higher threshold."""
    config = DriftConfig(dimensions=("route",), false_alarms=1.0)
    baselines = {"": Baseline(2000, 160, 20)}
    alone = thresholds({"": ({}, 5000.0)}, baselines, config)
    shared = thresholds(
        {"": ({}, 5000.0), **{f"route=r{i}": ({"route": f"r{i}"}, 5000.0) for i in range(9)}},
        baselines,
        config,
    )
    assert shared[detector_key("unsupported", {})][0] > alone[detector_key("unsupported", {})][0]
    h, delay, folded = shared[detector_key("unsupported", {"route": "r0"})]
    # The in-control run length is that detector's 30-day traffic over its share.
    share = 1.0 / 20
    q0 = baselines[""].rate
    spread = baselines[""].in_control_spread("unsupported", config.wobble, config.shift)
    # At the baseline rate, give or take its in-control spread.
    alarms = alarm_rate(q0, q0, q0 + 0.08, h, spread)
    assert 1 / alarms == pytest.approx(5000 * 30 / share, rel=0.05)
    assert run_length(q0, q0, q0 + 0.08, h) > 5000 * 30 / share
    assert not folded and delay < 5000


def test_thin_segment_folds_into_overall_and_frees_its_share() -> None:
    """A segment too quiet to catch the design shift within max_delay_days folds."""
    config = DriftConfig(dimensions=("tenant",), false_alarms=1.0, max_delay_days=7)
    baselines = {"": Baseline(2000, 160, 20)}
    result = thresholds(
        {
            "": ({}, 2000.0),
            "tenant=big": ({"tenant": "big"}, 1900.0),
            "tenant=tiny": ({"tenant": "tiny"}, 2.0),
        },
        baselines,
        config,
    )
    assert result[detector_key("unsupported", {"tenant": "tiny"})][2] is True
    assert result[detector_key("unsupported", {"tenant": "big"})][2] is False
    assert result[detector_key("unsupported", {})][2] is False  # overall never folds
    # The four live detectors share the budget: the tiny one took none of it.
    h = result[detector_key("unsupported", {"tenant": "big"})][0]
    q0 = baselines[""].rate
    spread = baselines[""].in_control_spread("unsupported", config.wobble, config.shift)
    assert 1 / alarm_rate(q0, q0, q0 + 0.08, h, spread) == pytest.approx(
        1900 * 30 / (1.0 / 4), rel=0.05
    )


def outcomes_stream(
    count: int,
    rate: float,
    seed: int,
    start: datetime = T0,
    step: timedelta = timedelta(minutes=1),
    labels: dict[str, str] | None = None,
    critical_share: float = 0.0,
) -> list[Outcome]:
    rng = random.Random(seed)
    result = []
    for i in range(count):
        bad = rng.random() < rate
        result.append(
            Outcome(
                f"{seed}-{i}",
                start + i * step,
                labels or {"route": "a"},
                bad,
                ("a claim",) if bad else (),
                critical=bad and rng.random() < critical_share,
            )
        )
    return result


CONFIG = DriftConfig(
    dimensions=("route",),
    threshold=6.0,
    baseline_records=500,
    baseline_days=0.0,
    segment_min_baseline=50,
)


def unsupported_reading(readings: list, segment: dict[str, str]):  # type: ignore[no-untyped-def]
    return next(r for r in readings if r.segment == segment and r.stream == "unsupported")


def test_sampling_weights_correct_a_rule_that_keeps_bad_records() -> None:
    """Bad records kept by a keep-always rule (weight 1) beside ratio-sampled ones
    (weight 10) read as the population rate, not as drift."""
    base = outcomes_stream(500, 0.08, seed=1)
    baseline = {"": Baseline(500, 40, 0), "route=a": Baseline(500, 40, 0)}
    rng = random.Random(2)
    after = []
    for i in range(600):
        at = T0 + timedelta(minutes=500 + i)
        if i % 3 == 0:  # a rule keeps every error: bad, standing for itself
            after.append(Outcome(f"r{i}", at, {"route": "a"}, True, ("x",), weight=1.0))
        else:  # the ratio keeps one in ten of the rest, bad at the population rate
            bad = rng.random() < 0.03
            after.append(
                Outcome(f"s{i}", at, {"route": "a"}, bad, ("x",) if bad else (), weight=10.0)
            )
    window_end = base[-1].at
    weighted = unsupported_reading(detect(base + after, baseline, window_end, CONFIG), {})
    unweighted = [
        Outcome(o.trace_id, o.at, o.labels, o.unsupported, o.unsupported_claims) for o in after
    ]
    naive = unsupported_reading(detect(base + unweighted, baseline, window_end, CONFIG), {})
    # Population: 200 errors at weight 1 and 400 × 10 ordinary at ~3% → about 8%.
    assert weighted.rate == pytest.approx((200 + 0.03 * 4000) / 4200, abs=0.02)
    assert weighted.level == "ok"
    assert naive.rate > 0.3 and naive.level == "firing"


def test_critical_stream_fires_when_only_critical_claims_rise() -> None:
    """Unsupported claims about numbers double while the overall rate barely moves."""
    base = outcomes_stream(1000, 0.08, seed=3, critical_share=0.1)
    window_end = base[-1].at
    after = outcomes_stream(
        1500, 0.10, seed=4, start=window_end + timedelta(minutes=1), critical_share=0.6
    )
    config = DriftConfig(
        dimensions=("route",),
        threshold=6.0,
        baseline_records=1000,
        baseline_days=0,
        segment_min_baseline=50,
    )
    from faithmon.drift import compute_baselines

    baselines = compute_baselines(base, window_end, config)
    readings = detect(base + after, baselines, window_end, config)
    critical = next(r for r in readings if r.segment == {} and r.stream == "critical")
    unsupported = unsupported_reading(readings, {})
    assert critical.level == "firing" and critical.rule == "critical_drift"
    assert unsupported.level != "firing"


def test_detector_restarts_after_its_alert_resolved() -> None:
    """``since`` drops the records before the restart point from the CUSUM."""
    base = outcomes_stream(500, 0.05, seed=5)
    window_end = base[-1].at
    bad = outcomes_stream(300, 0.4, seed=6, start=window_end + timedelta(minutes=1))
    good = outcomes_stream(300, 0.05, seed=7, start=bad[-1].at + timedelta(minutes=1))
    baselines = {"": Baseline(500, 25, 0), "route=a": Baseline(500, 25, 0)}
    stream = base + bad + good
    before = unsupported_reading(detect(stream, baselines, window_end, CONFIG), {})
    after = unsupported_reading(
        detect(
            stream,
            baselines,
            window_end,
            CONFIG,
            since={detector_key("unsupported", {}): bad[-1].at},
        ),
        {},
    )
    assert before.level == "firing"
    assert after.level == "ok" and after.records == 300
    assert after.recovered  # the recent rate's upper bound is back near the baseline


def test_silence_of_a_busy_segment_raises_no_data() -> None:
    """A route that brought a record a minute and stopped is silent; a trickle is not."""
    busy = outcomes_stream(600, 0.05, seed=8, labels={"route": "busy"})
    trickle = [
        Outcome(f"t{i}", T0 + timedelta(hours=3 * i), {"route": "trickle"}, False) for i in range(4)
    ]
    config = DriftConfig(dimensions=("route",), no_data_hours=2, no_data_dimensions=("route",))
    now = busy[-1].at + timedelta(hours=3)
    signals, silent = silences(sorted(busy + trickle, key=lambda o: o.at), config, now)
    levels = {tuple(s.segment.items()): s.level for s in signals}
    assert levels[(("route", "busy"),)] == "firing"
    assert levels[(("route", "trickle"),)] == "ok"
    # Overall went quiet with it: its only steady traffic was that route's.
    assert [s.segment for s in silent] == [{}, {"route": "busy"}]
    awake, _ = silences(busy, config, busy[-1].at + timedelta(minutes=30))
    assert {s.level for s in awake} == {"ok"}


def test_calibration_raises_the_threshold_for_a_detector_running_above_baseline() -> None:
    """History that runs above the frozen baseline (noise, creep) gets a higher threshold,
    and the replay shows it would have raised fewer alarms."""
    config = DriftConfig(dimensions=("route",), false_alarms=1.0)
    baselines = {"": Baseline(2000, 100, 10), "route=a": Baseline(2000, 100, 10)}
    history = outcomes_stream(14 * 24 * 20, 0.065, seed=9, step=timedelta(minutes=3))
    result = {c.detector: c for c in calibrate(history, baselines, config, days=14)}
    c = result[detector_key("unsupported", {})]
    assert c.observed_rate > c.baseline_rate
    assert c.threshold > c.budget_threshold
    assert c.replay_alarms <= c.replay_alarms_budget
    assert c.per_day == pytest.approx(480, rel=0.01)
    excluded = calibrate(
        history,
        baselines,
        config,
        days=14,
        excluded={detector_key("unsupported", {}): [(history[0].at, history[-1].at)]},
    )
    assert next(x for x in excluded if x.detector == c.detector).records == 0


def test_wobble_in_the_baseline_window_is_measured_and_raises_the_threshold() -> None:
    """A window whose rate swings between 4% and 12% has a measured spread; a steady one
    has about none, and the swinging one gets the higher threshold."""
    from faithmon.drift import compute_baselines

    steady = outcomes_stream(2400, 0.08, seed=12)
    swinging = [
        replace(o, unsupported=random.Random(i).random() < (0.04 if (i // 200) % 2 else 0.12))
        for i, o in enumerate(outcomes_stream(2400, 0.08, seed=13))
    ]
    config = DriftConfig(dimensions=(), false_alarms=0.1)
    calm = compute_baselines(steady, steady[-1].at, config)[""]
    wild = compute_baselines(swinging, swinging[-1].at, config)[""]
    assert calm.spread < 0.01
    assert wild.spread == pytest.approx(0.04, abs=0.01)
    per_day = {"": ({}, 2000.0)}
    h_calm = thresholds(per_day, {"": calm}, config)[detector_key("unsupported", {})][0]
    h_wild = thresholds(per_day, {"": wild}, config)[detector_key("unsupported", {})][0]
    assert h_wild > h_calm
