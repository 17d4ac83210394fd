"""The retrieval stream and the causes: records whose context relevance was measured
observe it, a record whose chunks miss the question is bad on it, and the faithfulness
detector counts its unsupported records by cause and names the dominant one."""

from __future__ import annotations

from datetime import timedelta

from faithmon.alerts import describe
from faithmon.drift import DriftConfig, compute_baselines, detect
from faithmon.model import Alert, Cause, Outcome, baseline_for, retrieval_missed
from tests.timing import days_ago

T0 = days_ago(1)
CONFIG = DriftConfig(
    dimensions=("route", "retriever_version"),
    threshold=5.0,
    baseline_records=200,
    baseline_days=0,
    segment_min_baseline=20,
)
ON_TOPIC = 0.9
OFF_TOPIC = 0.1


def outcome(
    i: int,
    route: str,
    relevance: float | None,
    cause: Cause | None = None,
    retriever: str = "kb-1",
) -> Outcome:
    unsupported = cause is not None
    return Outcome(
        f"t{i:04d}",
        T0 + timedelta(minutes=i),
        {"route": route, "retriever_version": retriever},
        unsupported,
        unsupported_claims=(f"claim of {cause}",) if unsupported else (),
        context_relevance=relevance,
        cause=cause,
    )


def window() -> list[Outcome]:
    """200 records, one in forty a retrieval miss; route c's judge measured no relevance."""
    return [
        outcome(i, "abc"[i % 3], None if i % 3 == 2 else OFF_TOPIC if i % 40 == 0 else ON_TOPIC)
        for i in range(200)
    ]


def test_the_retrieval_rule_and_its_baselines() -> None:
    """A miss is a measured relevance below the bar; a baseline counts the measured records
    only, and a route whose relevance was never measured has the stream off."""
    assert retrieval_missed(0.49) and not retrieval_missed(0.5) and not retrieval_missed(None)
    baselines = compute_baselines(window(), T0 + timedelta(minutes=199), CONFIG)

    assert baselines[""].measured == 134 and baselines[""].records == 200
    assert baselines["route=a"].missed == 2
    assert baselines["route=c"].measured == 0
    assert baseline_for("retrieval", baselines, "route=c", "") == (baselines[""], "overall")
    off = {key: b for key, b in baselines.items() if key != ""}
    off[""] = compute_baselines(
        [outcome(i, "c", None) for i in range(200)], T0 + timedelta(minutes=199), CONFIG
    )[""]
    assert baseline_for("retrieval", off, "route=c", "") is None


def test_a_new_retriever_that_misses_fires_retrieval_drift_on_its_segment() -> None:
    """After the window a new retriever version serves route a and misses one time in
    two; the model answers from memory on half of those misses. The retrieval detector of
    that retriever version fires, and the route's faithfulness detector puts the
    unsupported answers down to retrieval, with an example of the cause."""
    after = []
    for i in range(300):
        route = "ab"[i % 2]
        if route == "a":
            missed = i % 4 == 0
            cause: Cause | None = "retrieval" if missed and i % 8 == 0 else None
            relevance = OFF_TOPIC if missed else ON_TOPIC
            after.append(outcome(200 + i, route, relevance, cause, retriever="kb-2"))
        else:
            after.append(outcome(200 + i, route, ON_TOPIC, "generation" if i % 20 == 1 else None))

    readings = detect(
        window() + after,
        compute_baselines(window(), T0 + timedelta(minutes=199), CONFIG),
        T0 + timedelta(minutes=199),
        CONFIG,
    )

    found = {(tuple(sorted(r.segment.items())), r.stream): r for r in readings}
    new = found[((("retriever_version", "kb-2"),), "retrieval")]
    assert new.level == "firing" and new.rule == "retrieval_drift"
    assert new.rate > 0.4 and new.baseline_source == "overall"
    signal = new.signal()
    assert signal.details["examples"][0]["context_relevance"] == OFF_TOPIC
    assert found[((("route", "b"),), "retrieval")].level == "ok"
    faith_a = found[((("route", "a"),), "unsupported")]
    assert faith_a.dominant_cause == "retrieval"
    assert faith_a.cause_rates == {"retrieval": round(faith_a.rate, 4)}
    faith_b = found[((("route", "b"),), "unsupported")]
    assert faith_b.cause_rates == {"generation": round(faith_b.rate, 4)}


def test_a_faithfulness_alert_names_the_dominant_cause_with_examples_of_each() -> None:
    """Both causes on one route, retrieval the larger share: the signal says so in points
    of the rate, keeps an example of each cause, and the alert's one line names it."""
    after = []
    for i in range(200):
        cause: Cause | None = None
        if i % 4 == 0:
            cause = "retrieval"
        elif i % 12 == 1:
            cause = "generation"
        relevance = OFF_TOPIC if cause == "retrieval" else ON_TOPIC
        after.append(outcome(200 + i, "a", relevance, cause))

    readings = detect(
        window() + after,
        compute_baselines(window(), T0 + timedelta(minutes=199), CONFIG),
        T0 + timedelta(minutes=199),
        CONFIG,
    )

    faith = next(r for r in readings if r.segment == {"route": "a"} and r.stream == "unsupported")
    assert faith.level == "firing"
    signal = faith.signal()
    causes = signal.details["causes"]
    assert signal.details["dominant_cause"] == "retrieval"
    assert causes["retrieval"] > causes["generation"] > 0
    assert round(causes["retrieval"] + causes["generation"], 3) == round(faith.rate, 3)
    shown = {e["cause"] for e in signal.details["examples"]}
    assert shown == {"retrieval", "generation"}
    alert = Alert(
        id=1,
        rule=signal.rule,
        segment=dict(signal.segment),
        state="firing",
        severity="critical",
        opened_at=T0,
        updated_at=T0,
        details=dict(signal.details),
    )
    line = describe(alert)
    assert "mostly retrieval" in line and f"{causes['retrieval'] * 100:.1f} points" in line
