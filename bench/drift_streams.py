"""Production drift, simulated: scored records at 200 and 20 per hour whose faithful
rate wobbles around 0.92, then drops; each stream measured with faithmon's own
baseline, threshold and CUSUM, the way the worker calls them."""

from __future__ import annotations

import math
import random
import statistics
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import cache
from typing import Any

from faithmon import drift
from faithmon.model import Outcome

SEED = 20261201
TAU = 2 * math.pi

# Production drift: the streams.
RATES = (200, 20)
"""Scored records per hour."""
FAITHFUL = 0.92
DROPS = (0.85, 0.80, 0.70)
GOAL_DROP = 0.80
GOAL_RECORDS = 300
FLIP = 0.03
"""Judge noise: the share of verdicts flipped, each way."""
WOBBLE = 0.01
PERIOD_HOURS = 7 * 24
BASELINE_HOURS = 7 * 24
CHANGE_AFTER_HOURS = 24
"""In-control traffic between the end of the baseline and the change point."""
HORIZON_HOURS = 7 * 24
"""How long after the change a stream runs before a miss is called a miss."""
MONTH_HOURS = 30 * 24
SEGMENT_BUDGET = 0.1
"""False alarms per 30 days for the segment, shared by its two detectors."""
DETECTORS = 2
"""The simulated answers cite nothing: unsupported and critical, no citation detector."""
CONFIG = drift.DriftConfig(dimensions=(), false_alarms=SEGMENT_BUDGET)
SHARE = SEGMENT_BUDGET / DETECTORS
UNSUPPORTED = drift.detector_key("unsupported", {})
WOBBLE_PHASES = 12
T0 = datetime(2026, 1, 5, tzinfo=UTC)


def unsupported_rate(faithful: float) -> float:
    """The rate the detector sees: the judge's flips move verdicts both ways."""
    return FLIP + (1 - 2 * FLIP) * (1 - faithful)


def verdicts(
    us: Sequence[float], rate: int, phase: float, first_hour: int, level: Callable[[int], float]
) -> list[bool]:
    """Unsupported verdicts of hourly blocks of records, from their uniforms ``us``.

    The wobble changes slowly, so one rate per hour is exact enough and keeps the
    inner loop to a comparison.
    """
    out: list[bool] = []
    for k in range(0, len(us), rate):
        hour = first_hour + k // rate
        wobble = WOBBLE * math.sin(TAU * hour / PERIOD_HOURS + phase)
        p = unsupported_rate(level(hour) + wobble)
        out += [u < p for u in us[k : k + rate]]
    return out


def in_control(_: int) -> float:
    return FAITHFUL


def uniforms(rnd: random.Random, count: int) -> list[float]:
    draw = rnd.random
    return [draw() for _ in range(count)]


@cache
def trace_times(rate: int) -> tuple[datetime, ...]:
    """Record i arrives at (i + ½) / rate hours: evenly, never on the window's edge."""
    return tuple(T0 + timedelta(hours=(i + 0.5) / rate) for i in range(BASELINE_HOURS * rate + 1))


@dataclass(frozen=True, slots=True)
class Detector:
    q0: float
    q1: float
    h: float
    window_end: datetime
    baselines: Mapping[str, drift.Baseline]


def calibrate(flags: Sequence[bool], rate: int) -> tuple[Detector, list[Outcome]]:
    """The worker's baseline and threshold from the first 7 days and one record after them."""
    outcomes = [Outcome("", at, {}, y) for at, y in zip(trace_times(rate), flags, strict=True)]
    window = drift.baseline_window(outcomes, CONFIG)
    if window is None:
        raise RuntimeError("the simulated stream does not cover the baseline window")
    baselines = drift.compute_baselines(outcomes, window[1], CONFIG)
    h, _, _ = drift.thresholds({"": ({}, rate * 24.0)}, baselines, CONFIG)[UNSUPPORTED]
    q0 = baselines[""].rate_of("unsupported")
    q1 = min(q0 + CONFIG.shift_of("unsupported"), 0.99)
    return Detector(q0, q1, h, window[1], baselines), outcomes


def alarms(ys: Sequence[bool], detector: Detector) -> Iterator[int]:
    """Every alarm of the CUSUM, restarted from zero after each one."""
    start = 0
    while True:
        found = drift.first_alarm(ys[start:], detector.q0, detector.q1, detector.h)
        if found is None:
            return
        yield start + found
        start += found + 1


@dataclass(frozen=True, slots=True)
class Delay:
    rate: int
    drop: float
    seed: int
    q0: float
    h: float
    records: int | None
    """Records from the change point to the alarm, both counted; None: none in the horizon."""
    early_alarms: int
    """False alarms between the baseline and the change point."""
    markov: float
    """The exact expected delay from zero: ``run_length(q after the drop, q0, q1, h)``."""


def detect_stream(rate: int, seed: int) -> tuple[float, list[bool], list[float]]:
    """A seed's wobble phase, baseline verdicts and the uniforms of what follows."""
    rnd = random.Random(f"{SEED}:detect:{rate}:{seed}")
    phase = rnd.uniform(0, TAU)
    base = verdicts(uniforms(rnd, BASELINE_HOURS * rate), rate, phase, 0, in_control)
    return phase, base, uniforms(rnd, (CHANGE_AFTER_HOURS + HORIZON_HOURS) * rate)


def changing_to(drop: float) -> Callable[[int], float]:
    def level(hour: int) -> float:
        return FAITHFUL if hour < BASELINE_HOURS + CHANGE_AFTER_HOURS else drop

    return level


def detect_task(rate: int, seed: int) -> list[Delay]:
    phase, base, us = detect_stream(rate, seed)
    # The same uniforms serve every drop, so the drops differ only by the drop.
    streams = {d: verdicts(us, rate, phase, BASELINE_HOURS, changing_to(d)) for d in DROPS}
    detector, _ = calibrate([*base, streams[DROPS[0]][0]], rate)
    change = CHANGE_AFTER_HOURS * rate
    delays = []
    for drop, ys in streams.items():
        early, found = 0, None
        for at in alarms(ys, detector):
            if at >= change:
                found = at - change + 1
                break
            early += 1
        markov = drift.run_length(unsupported_rate(drop), detector.q0, detector.q1, detector.h)
        delays.append(Delay(rate, drop, seed, detector.q0, detector.h, found, early, markov))
    return delays


@dataclass(frozen=True, slots=True)
class Control:
    rate: int
    stream: int
    months: int
    alarms: int
    q0: float
    h: float
    budget: float
    """Markov: alarms per 30 days if the true rate were exactly the estimated q0 (the budget)."""
    baseline_error: float
    """Markov: at the true in-control rate against the estimated q0, without the wobble."""
    wobble: float
    """Markov: the same, averaged over the wobble's phases (alarms are short next to a week)."""


def control_task(rate: int, stream: int, months: int) -> Control:
    rnd = random.Random(f"{SEED}:control:{rate}:{stream}")
    phase = rnd.uniform(0, TAU)
    ys = verdicts(uniforms(rnd, BASELINE_HOURS * rate), rate, phase, 0, in_control)
    # Generated a month at a time: a float per record for months would not fit.
    for month in range(months):
        first = BASELINE_HOURS + month * MONTH_HOURS
        ys += verdicts(uniforms(rnd, MONTH_HOURS * rate), rate, phase, first, in_control)
    cut = BASELINE_HOURS * rate
    detector, _ = calibrate(ys[: cut + 1], rate)
    count = sum(1 for _ in alarms(ys[cut:], detector))
    volume = MONTH_HOURS * rate

    def per_month(q: float) -> float:
        return volume / drift.run_length(q, detector.q0, detector.q1, detector.h)

    wobbled = [
        per_month(unsupported_rate(FAITHFUL + WOBBLE * math.sin(TAU * k / WOBBLE_PHASES)))
        for k in range(WOBBLE_PHASES)
    ]
    return Control(
        rate,
        stream,
        months,
        count,
        detector.q0,
        detector.h,
        per_month(detector.q0),
        per_month(unsupported_rate(FAITHFUL)),
        statistics.fmean(wobbled),
    )


def cross_check(rate: int, seed: int) -> dict[str, Any]:
    """``detect`` over the same outcomes fires at the record ``first_alarm`` found,
    with the threshold it sizes from its own measure of the traffic."""
    phase, base, us = detect_stream(rate, seed)
    ys = verdicts(us, rate, phase, BASELINE_HOURS, changing_to(GOAL_DROP))
    detector, outcomes = calibrate([*base, ys[0]], rate)
    at = next(alarms(ys, detector))
    after = [
        Outcome(f"{i:032x}", T0 + timedelta(hours=(BASELINE_HOURS * rate + i + 0.5) / rate), {}, y)
        for i, y in enumerate(ys[: at + 1])
    ]
    history = outcomes[:-1]

    def reading(count: int) -> drift.Reading:
        readings = drift.detect(
            history + after[:count], detector.baselines, detector.window_end, CONFIG
        )
        return next(r for r in readings if r.stream == "unsupported" and not r.segment)

    firing = reading(at + 1)
    before = reading(at)
    return {
        "rate": rate,
        "seed": seed,
        "alarm_record": at,
        "first_alarm_h": detector.h,
        "detect_h": firing.threshold,
        "detect_per_day": round(firing.per_day, 1),
        "detect_level_at_alarm": firing.level,
        "detect_level_before": before.level,
        "agrees": firing.level == "firing"
        and before.level != "firing"
        and firing.threshold == detector.h,
    }
