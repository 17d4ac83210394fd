"""The citation stream: only records whose answer cites observe it, its baselines need
citing records of their own (else the overall's, else the stream is off), and its
detectors take a share of the budget only where they exist."""

from __future__ import annotations

from datetime import timedelta

from faithmon.drift import (
    Baseline,
    DriftConfig,
    compute_baselines,
    detect,
    detector_key,
    thresholds,
)
from faithmon.model import Outcome, baseline_for
from tests.timing import days_ago

T0 = days_ago(1)
CONFIG = DriftConfig(
    dimensions=("route",),
    threshold=5.0,
    baseline_records=200,
    baseline_days=0,
    segment_min_baseline=20,
)


def outcome(i: int, route: str, cites: bool, miscited: bool = False) -> Outcome:
    return Outcome(
        f"t{i:04d}",
        T0 + timedelta(minutes=i),
        {"route": route},
        False,
        cited=cites,
        miscited=miscited,
        miscited_claims=("a claim citing the wrong chunk",) if miscited else (),
    )


def window() -> list[Outcome]:
    """200 records: route a always cites (one in twenty wrongly), route b cites 10 times,
    route c never."""
    found = []
    for i in range(200):
        route = "abc"[i % 3]
        cites = route == "a" or (route == "b" and i % 6 == 1 and i < 60)
        found.append(outcome(i, route, cites, route == "a" and i % 60 == 0))
    return found


def test_only_citing_records_count_in_a_citation_baseline() -> None:
    """Route a's baseline holds its citing records; b's 10 are too few to stand for a rate
    (it is measured against the overall's), and c, which never cites, has none."""
    baselines = compute_baselines(window(), T0 + timedelta(minutes=199), CONFIG)

    assert (baselines["route=a"].cited, baselines["route=a"].miscited) == (67, 4)
    assert baselines["route=b"].cited == baselines["route=c"].cited == 0
    assert baselines[""].cited == 77 and baselines[""].records == 200
    assert baselines["route=a"].rate_of("citation") == (4 + 0.5) / 68
    assert baseline_for("citation", baselines, "route=b", "") == (baselines[""], "overall")
    assert baseline_for("citation", baselines, "route=a", "") == (baselines["route=a"], "own")
    off = {**baselines, "": Baseline(200, 0)}
    assert baseline_for("citation", off, "route=c", "") is None


def test_wrong_citations_drift_on_the_citing_route_and_not_elsewhere() -> None:
    """After the window route a cites wrongly one time in two: its citation detector fires
    while its unsupported rate stays 0; route c, which never cites, reads no citation
    stream at all, and b (no citations after the window) neither."""
    after = [outcome(200 + i, "abc"[i % 3], i % 3 == 0, i % 6 == 0) for i in range(300)]

    readings = detect(
        window() + after,
        compute_baselines(window(), T0 + timedelta(minutes=199), CONFIG),
        T0 + timedelta(minutes=199),
        CONFIG,
    )

    found = {(r.segment.get("route", ""), r.stream): r for r in readings}
    assert found[("a", "citation")].level == "firing"
    assert found[("a", "citation")].records == 100
    assert found[("a", "citation")].examples[0].miscited_claims
    assert found[("a", "unsupported")].level == "ok" and found[("a", "unsupported")].rate == 0
    assert ("c", "citation") not in found
    assert ("b", "citation") in found  # it cited in the window: its overall's baseline
    assert found[("b", "citation")].records == 0
    assert found[("b", "citation")].baseline_source == "overall"
    signal = found[("a", "citation")].signal()
    assert signal.rule == "citation_drift" and signal.details["baseline_records"] == 67


def test_a_segment_without_citing_traffic_takes_no_share_of_the_budget() -> None:
    """The thresholds a deployment that never cites gets are the two streams' ones it
    always got; a citing segment adds one detector, which shares the budget."""
    config = DriftConfig(dimensions=("route",), false_alarms=1.0)
    baselines = {"": Baseline(2000, 160, 20, cited=1500, miscited=60)}
    plain = thresholds({"": ({}, 5000.0)}, {"": Baseline(2000, 160, 20)}, config)
    citing_off = thresholds({"": ({}, 5000.0)}, baselines, config)
    citing = thresholds({"": ({}, 5000.0)}, baselines, config, cited={"": 3000.0})

    assert set(plain) == set(citing_off) == {"unsupported|", "critical|"}
    assert plain["unsupported|"] == citing_off["unsupported|"]
    assert set(citing) == {"unsupported|", "critical|", detector_key("citation", {})}
    # A third detector shares the budget: each of the others gets a smaller share.
    assert citing["unsupported|"][0] > plain["unsupported|"][0]
