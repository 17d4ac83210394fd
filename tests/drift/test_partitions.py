"""Drift per tenant partition: each tenant's overall and segments, their baselines and
windows, folding, attribution, silence, restarts and calibration stay inside it, and
only the false-alarm budget is shared."""

from __future__ import annotations

import random
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from faithmon.drift import (
    Baseline,
    DriftConfig,
    Reading,
    alarm_rate,
    calibrate,
    compute_baselines,
    detect,
    freeze,
    restart_points,
    silences,
    thresholds,
)
from faithmon.model import Outcome, segment_key

T0 = datetime(2026, 3, 1, tzinfo=UTC)
MINUTE = timedelta(minutes=1)
DIMENSIONS = ("route", "tenant", "model")
TENANTS = (None, "acme", "globex")
CONFIG = DriftConfig(
    dimensions=DIMENSIONS,
    threshold=6.0,
    shift=0.1,
    baseline_records=300,
    baseline_days=0.0,
    segment_min_baseline=30,
    recovery_records=60,
    no_data_hours=2,
    no_data_dimensions=("route", "tenant"),
)


def record(
    i: int, tenant: str | None, model: str, bad: bool, at: datetime | None = None
) -> Outcome:
    labels = {"route": ("a", "b")[(i // 6) % 2], "model": model}
    if tenant is not None:
        labels["tenant"] = tenant
    claims = ("an invented claim",) if bad else ()
    return Outcome(f"{tenant or 'none'}-{i:04d}", at or T0 + i * MINUTE, labels, bad, claims)


def traffic(count: int = 900, drift_from: int = 450, seed: int = 1) -> list[Outcome]:
    """No tenant, acme and globex in turn, a record a minute; from ``drift_from`` on half
    of globex's records come from model m2, unsupported every other time."""
    rng = random.Random(seed)
    outcomes = []
    for i in range(count):
        tenant = TENANTS[i % 3]
        model = "m2" if tenant == "globex" and i >= drift_from and (i // 3) % 2 else "m1"
        outcomes.append(record(i, tenant, model, rng.random() < (0.5 if model == "m2" else 0.04)))
    return outcomes


def reading(
    readings: list[Reading], segment: dict[str, str], stream: str = "unsupported"
) -> Reading:
    return next(r for r in readings if r.segment == segment and r.stream == stream)


def test_one_tenant_drifts_and_only_its_partition_alerts() -> None:
    """globex's new model fires under globex's name and explains globex's overall; acme's
    overall and the records without a tenant stay ok; no example crosses tenants."""
    outcomes = traffic()
    frozen = freeze(outcomes, CONFIG)
    assert frozen is not None and frozen.windows == {}

    readings = detect(outcomes, frozen.segments, frozen.end, CONFIG)

    alerting = [r for r in readings if r.signal().level != "ok"]
    assert alerting and {r.segment.get("tenant") for r in alerting} == {"globex"}
    m2 = reading(readings, {"tenant": "globex", "model": "m2"})
    assert m2.level == "firing" and m2.explained_by is None
    # New since the window: compared with globex's overall, never another partition's.
    assert m2.baseline_source == "overall" and m2.baseline == frozen.segments["tenant=globex"]
    globex = reading(readings, {"tenant": "globex"})
    assert globex.level != "ok" and globex.explained_by == {"tenant": "globex", "model": "m2"}
    acme = reading(readings, {"tenant": "acme"})
    assert acme.level == "ok" and acme.records == 200
    assert reading(readings, {}).level == "ok" and reading(readings, {}).records == 200
    for r in readings:
        assert r.partition == CONFIG.partition_of(r.segment)
        assert all(o.labels.get("tenant") == r.segment.get("tenant") for o in r.examples)
        shown = r.signal().details["examples"]
        assert all(e["trace_id"].startswith(r.segment.get("tenant", "none")) for e in shown)
    # Tenant is the partition, not also one of its segments.
    keys = {segment_key(r.segment) for r in readings}
    assert {k for k in keys if "tenant=acme" in k} == {
        "tenant=acme",
        "model=m1,tenant=acme",
        "route=a,tenant=acme",
        "route=b,tenant=acme",
    }
    assert {k for k in keys if "tenant=" not in k} == {"", "model=m1", "route=a", "route=b"}


def test_the_untenanted_partition_reads_as_if_it_were_alone() -> None:
    """The records without a tenant get the baselines and readings they would get with no
    tenant's records beside them (the threshold pinned: the budget is shared)."""
    outcomes = traffic()
    alone = [o for o in outcomes if "tenant" not in o.labels]
    frozen = freeze(outcomes, CONFIG)
    assert frozen is not None
    untenanted = {k: b for k, b in frozen.segments.items() if "tenant=" not in k}
    assert untenanted == compute_baselines(alone, frozen.end, CONFIG)
    clock = outcomes[-1].at

    together = detect(outcomes, frozen.segments, frozen.end, CONFIG, now=clock)

    assert [r for r in together if not r.partition] == detect(
        alone, untenanted, frozen.end, CONFIG, now=clock
    )


def test_a_segment_is_never_explained_by_another_partition() -> None:
    """The untenanted overall drifts hardest; globex's drifting overall is not 'explained'
    by it, though taking the untenanted records out would leave globex nothing."""
    rng = random.Random(3)
    outcomes = []
    for i in range(900):
        tenant = (None, "globex")[i % 2]
        rate = 0.04 if i < 300 else (0.6 if tenant is None else 0.3)
        outcome = record(i, tenant, "m1", rng.random() < rate)
        outcomes.append(
            replace(outcome, labels={k: v for k, v in outcome.labels.items() if k == "tenant"})
        )
    frozen = freeze(outcomes, CONFIG)
    assert frozen is not None

    readings = detect(outcomes, frozen.segments, frozen.end, CONFIG)

    assert reading(readings, {}).level == "firing"
    globex = reading(readings, {"tenant": "globex"})
    assert globex.level == "firing" and globex.explained_by is None
    assert globex.signal().level == "firing"


def test_partition_overalls_never_fold_and_share_one_budget() -> None:
    """A thin tenant's overall keeps a detector (its segments fold into it); the budget
    is split evenly over the live detectors of every partition."""
    config = DriftConfig(dimensions=("route", "tenant"), false_alarms=1.0, max_delay_days=7)
    baselines = {"": Baseline(2000, 160, 20), "tenant=tiny": Baseline(400, 40, 4)}
    untenanted = {"": ({}, 2000.0), "route=a": ({"route": "a"}, 1900.0)}
    tiny = {
        "tenant=tiny": ({"tenant": "tiny"}, 2.0),
        "route=a,tenant=tiny": ({"tenant": "tiny", "route": "a"}, 1.0),
    }
    result = thresholds(
        {**untenanted, **tiny}, baselines, config, {key: "tenant=tiny" for key in tiny}
    )

    assert [result[f"{s}|tenant=tiny"][2] for s in ("unsupported", "critical")] == [False, False]
    assert result["unsupported|route=a,tenant=tiny"][2] is True
    # Six live detectors: the untenanted ones get what 4/6 of the budget would give them
    # alone, and route=a's in-control run length is its 30 days over a sixth.
    alone = thresholds(untenanted, baselines, replace(config, false_alarms=4 / 6))
    assert {k: result[k] for k in alone} == alone
    h = result["unsupported|route=a"][0]
    q0 = baselines[""].rate
    spread = baselines[""].in_control_spread("unsupported", config.wobble, config.shift)
    assert 1 / alarm_rate(q0, q0, q0 + 0.08, h, spread) == pytest.approx(1900 * 30 * 6, rel=0.05)
    # The thin tenant is sized on its own overall's baseline, not on the untenanted one.
    q_tiny = baselines["tenant=tiny"].rate
    assert q_tiny != q0
    tiny_alone = thresholds(
        {"": ({}, 2.0)}, {"": baselines["tenant=tiny"]}, replace(config, false_alarms=2 / 6)
    )
    assert result["unsupported|tenant=tiny"][:2] == pytest.approx(tiny_alone["unsupported|"][:2])


def test_a_tenant_too_small_or_too_late_freezes_over_a_window_of_its_own() -> None:
    """initech has too few records in the first window and umbrella comes later: each
    freezes once its own records suffice, and nothing frozen before changes."""
    first = [record(i, (None, "acme")[i % 2], "m1", i % 25 == 0) for i in range(300)]
    few = [record(1000 + i, "initech", "m1", False, T0 + (2 * i + 1) * MINUTE) for i in range(10)]
    start = sorted(first + few, key=lambda o: o.at)
    frozen = freeze(start, CONFIG)
    assert frozen is not None
    assert {"", "tenant=acme"} <= set(frozen.segments) and "tenant=initech" not in frozen.segments
    assert (frozen.start, frozen.end) == (T0, start[299].at)

    later = T0 + 400 * MINUTE
    more = [record(2000 + i, "initech", "m1", i % 10 == 0, later + i * MINUTE) for i in range(40)]
    new = [record(3000 + i, "umbrella", "m1", False, later + i * MINUTE) for i in range(20)]
    everything = sorted(start + more + new, key=lambda o: o.at)
    grown = freeze(everything, CONFIG, frozen)

    assert grown is not None and grown is not frozen
    assert {k: grown.segments[k] for k in frozen.segments} == frozen.segments
    assert grown.window_of("") == (frozen.start, frozen.end)
    own = (few[0].at, more[19].at)  # its 30th record: segment_min_baseline of them
    assert grown.window_of("tenant=initech") == own == grown.windows["model=m1,tenant=initech"]
    assert "tenant=umbrella" not in grown.segments
    assert freeze(everything, CONFIG, grown) is grown
    # Its detectors start after its own window, not after the first one.
    ends = {k: w[1] for k, w in grown.windows.items()}
    readings = detect(everything, grown.segments, grown.end, CONFIG, ends=ends)
    assert reading(readings, {"tenant": "initech"}).records == 20
    assert not any(r.segment.get("tenant") == "umbrella" for r in readings)


def test_a_quiet_tenant_raises_no_data_under_its_own_name() -> None:
    """acme stops while the others go on: its overall and routes are silent, not overall."""
    busy = traffic(600, drift_from=600)
    rest = [record(600 + i, TENANTS[i % 2 * 2], "m1", False) for i in range(180)]
    now = rest[-1].at + MINUTE

    signals, silent = silences(busy + rest, CONFIG, now)

    assert [s.segment for s in silent] == [
        {"tenant": "acme"},
        {"tenant": "acme", "route": "a"},
        {"tenant": "acme", "route": "b"},
    ]
    levels = {segment_key(s.segment): s.level for s in signals}
    assert levels[""] == levels["tenant=globex"] == "ok"


def test_a_resolved_alert_restarts_detectors_of_its_partition_only() -> None:
    """Resetting the untenanted overall restarts the untenanted segments, not every
    tenant's (whose records {} would otherwise match)."""
    outcomes = traffic()
    at = outcomes[-1].at

    untenanted = restart_points(outcomes, [("unsupported", {}, at)], DIMENSIONS, "tenant")
    globex = restart_points(
        outcomes, [("unsupported", {"tenant": "globex", "model": "m2"}, at)], DIMENSIONS, "tenant"
    )

    assert set(untenanted) == {
        "unsupported|",
        "unsupported|model=m1",
        "unsupported|route=a",
        "unsupported|route=b",
    }
    assert set(globex) == {
        "unsupported|tenant=globex",
        "unsupported|model=m2,tenant=globex",
        "unsupported|route=a,tenant=globex",
        "unsupported|route=b,tenant=globex",
    }


def test_calibration_runs_per_partition_on_one_budget() -> None:
    """Each partition's detectors are calibrated on their own records, grouped by
    partition; a partition whose baseline is still building is left out."""
    outcomes = traffic()
    frozen = freeze(outcomes, CONFIG)
    assert frozen is not None
    config = replace(CONFIG, threshold=None, false_alarms=1.0)
    late = [record(5000 + i, "initech", "m1", False) for i in range(50)]

    result = calibrate(outcomes[300:] + late, frozen.segments, config, days=0.5)

    order = [c.detector for c in result if c.stream == "unsupported"]
    assert order == [
        "unsupported|",
        "unsupported|model=m1",
        "unsupported|route=a",
        "unsupported|route=b",
        "unsupported|tenant=acme",
        "unsupported|model=m1,tenant=acme",
        "unsupported|route=a,tenant=acme",
        "unsupported|route=b,tenant=acme",
        "unsupported|tenant=globex",
        "unsupported|model=m1,tenant=globex",
        "unsupported|model=m2,tenant=globex",
        "unsupported|route=a,tenant=globex",
        "unsupported|route=b,tenant=globex",
    ]
    acme = next(c for c in result if c.detector == "unsupported|tenant=acme")
    assert acme.records == 200 and acme.baseline_rate == round(
        frozen.segments["tenant=acme"].rate, 4
    )
