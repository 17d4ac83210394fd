"""Drift, sentinels and calibration through the worker jobs and the store, on SQLite
and PostgreSQL: sampling weights, resolution and restart, silence, calibrated
thresholds, the starter sentinel set and a broken judge configuration."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest
from click.testing import CliRunner
from sqlalchemy.orm import Session, sessionmaker

from faithmon import drift
from faithmon.alerts import Policy
from faithmon.cli import main
from faithmon.jobs import check_drift, run_sentinels, score_pending
from faithmon.judge import OfflineJudge
from faithmon.model import Chunk, RagRecord, SamplingTally
from faithmon.store import alerts as store_alerts
from faithmon.store import evaluations as store_evaluations
from faithmon.store import records as store_records
from faithmon.store import sampling as store_sampling
from faithmon.store import sentinels as store_sentinels
from faithmon.store import thresholds as store_thresholds
from tests.timing import days_ago

T0 = days_ago(2)  # midnight, so the first records share an hour
CONTEXT = "Order A17 shipped on 3 March by courier."
BAD = CONTEXT + " It arrives tomorrow by drone."
JUDGE = OfflineJudge()


def record(
    n: int, answer: str, start: datetime = T0, reason: str = "sampled", **labels: str
) -> RagRecord:
    return RagRecord(
        trace_id=f"{n + 1:032x}",
        question="Where is order A17?",
        answer=answer,
        chunks=(Chunk(0, CONTEXT, id=f"doc-{n % 3}"),),
        labels=labels,
        started_at=start + timedelta(minutes=n),
        sample_reason=reason,
    )


def save_and_score(sessions: sessionmaker[Session], records: list[RagRecord]) -> None:
    with sessions.begin() as session:
        store_records.save_records(session, records)
    score_pending(sessions, JUDGE)


CONFIG = drift.DriftConfig(
    dimensions=("route", "model"),
    threshold=6.0,
    baseline_records=60,
    baseline_days=0,
    segment_min_baseline=10,
    recovery_records=60,
    no_data_hours=2,
    no_data_dimensions=("route",),
)


def test_sampling_weights_come_from_the_stored_counts(sessions: sessionmaker[Session]) -> None:
    """A ratio-sampled record stands for its hour's dropped records; a rule-kept one for
    itself."""
    save_and_score(
        sessions,
        [
            record(0, CONTEXT, route="a"),
            record(1, BAD, reason="rule:error", route="a"),
            record(2, CONTEXT, reason="rule:minimum", route="a"),
        ],
    )
    hour = T0.replace(minute=0)
    with sessions.begin() as session:
        store_sampling.save_sampling(
            session,
            [
                SamplingTally(hour, {"route": "a"}, "sampled", 1),
                SamplingTally(hour, {"route": "a"}, "rule:minimum", 1),
                SamplingTally(hour, {"route": "a"}, "sampled_out", 15),
                SamplingTally(hour, {"route": "a"}, "rate_limited", 2),
                SamplingTally(hour, {"route": "a"}, "rule:error", 1),
            ],
            [],
        )
    with sessions() as session:
        outcomes = drift.weigh(
            store_evaluations.outcomes(session, JUDGE.name),
            store_sampling.sampling_counts(session),
        )
    assert [(o.unsupported, o.weight) for o in outcomes] == [
        (False, 9.5),  # (1 + 1 + 15 + 2) / (1 + 1)
        (True, 1.0),
        (False, 9.5),
    ]


def test_alert_resolves_after_recovery_and_the_detector_restarts(
    sessions: sessionmaker[Session],
) -> None:
    """m2 goes bad and fires; once its recent records look like the baseline for two
    runs the alert resolves, and the next run starts its CUSUM after that point."""
    baseline = [record(n, CONTEXT, route="a", model="m1") for n in range(60)]
    bad = [
        record(60 + n, BAD if n % 4 == 1 else CONTEXT, route="a", model=("m1", "m2")[n % 2])
        for n in range(80)
    ]
    save_and_score(sessions, baseline + bad)
    first = check_drift(sessions, JUDGE.name, CONFIG, now=lambda: T0)
    rules = {(a.rule, tuple(a.segment.items())): a.state for a in first.changed}
    assert rules[("faithfulness_drift", (("model", "m2"),))] == "firing"

    save_and_score(sessions, [record(140 + n, CONTEXT, route="a", model="m2") for n in range(60)])
    policy = Policy(recovery_runs=2)
    runs = [
        check_drift(sessions, JUDGE.name, CONFIG, now=lambda: T0, policy=policy) for _ in range(2)
    ]

    def m2(run: object) -> str:
        changed = run.changed  # type: ignore[attr-defined]
        return next(
            a.state
            for a in changed
            if a.rule == "faithfulness_drift" and a.segment == {"model": "m2"}
        )

    assert [m2(r) for r in runs] == ["firing", "resolved"]
    with sessions() as session:
        [resolved] = store_alerts.resolved_alerts(session, ["faithfulness_drift"])
    reset = datetime.fromisoformat(resolved.details["reset_at"])
    after = check_drift(sessions, JUDGE.name, CONFIG, now=lambda: T0)
    reading = next(
        r for r in after.readings if r.segment == {"model": "m2"} and r.stream == "unsupported"
    )
    assert reset == T0 + timedelta(minutes=199)
    assert reading.records == 0 or reading.level == "ok"
    assert not any(a.rule == "faithfulness_drift" for a in after.changed)


def test_silent_route_raises_no_data_until_traffic_returns(
    sessions: sessionmaker[Session],
) -> None:
    """Route b, one record every two minutes, stops for three hours: no_data fires;
    records again resolve it."""
    save_and_score(
        sessions,
        [record(n, CONTEXT, route="a" if n % 2 else "b", model="m1") for n in range(120)],
    )
    later = T0 + timedelta(minutes=120)
    save_and_score(
        sessions, [record(120 + n, CONTEXT, start=T0, route="a", model="m1") for n in range(180)]
    )
    silent_at = T0 + timedelta(minutes=300)
    run = check_drift(sessions, JUDGE.name, CONFIG, now=lambda: silent_at)
    no_data = [a for a in run.changed if a.rule == "no_data"]
    assert [(a.segment, a.state, a.severity) for a in no_data] == [
        ({"route": "b"}, "firing", "warning")
    ]
    assert no_data[0].details["usual_per_day"] > 100
    save_and_score(
        sessions, [record(300 + n, CONTEXT, start=T0, route="b", model="m1") for n in range(5)]
    )
    back = check_drift(sessions, JUDGE.name, CONFIG, now=lambda: later + timedelta(hours=3))
    assert [(a.rule, a.state) for a in back.changed if a.rule == "no_data"] == [
        ("no_data", "resolved")
    ]


def test_calibrate_stores_thresholds_the_drift_run_then_uses(
    sessions: sessionmaker[Session], database_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`faithmon drift calibrate` replays recent history, stores a threshold per
    detector, and the next drift run reads them; --reset goes back to the budget."""
    start = datetime.now(UTC) - timedelta(days=5)
    records = [
        record(n, BAD if n % 11 == 0 else CONTEXT, start=start, route="a", model="m1")
        for n in range(0, 600)
    ]
    save_and_score(sessions, records)
    monkeypatch.setenv("FAITHMON_DATABASE_URL", database_url)
    monkeypatch.setenv("FAITHMON_DRIFT_DIMENSIONS", "route")
    monkeypatch.setenv("FAITHMON_DRIFT_BASELINE_RECORDS", "200")
    monkeypatch.setenv("FAITHMON_DRIFT_BASELINE_DAYS", "0")
    config = replace(CONFIG, dimensions=("route",), threshold=None, baseline_records=200)
    check_drift(sessions, JUDGE.name, config)  # freezes the baseline
    runner = CliRunner()
    result = runner.invoke(main, ["drift", "calibrate", "--days", "7", "--json"])
    assert result.exit_code == 0, result.output
    rows = {row["detector"]: row for row in json.loads(result.stdout)}
    assert set(rows) == {"unsupported|", "critical|", "unsupported|route=a", "critical|route=a"}
    with sessions() as session:
        stored = store_thresholds.load(session)
    assert stored == {key: row["threshold"] for key, row in rows.items()}
    readings = check_drift(sessions, JUDGE.name, config, dry_run=True).readings
    assert {drift.detector_key(r.stream, r.segment): r.threshold for r in readings} == stored
    assert runner.invoke(main, ["drift", "calibrate", "--reset"]).exit_code == 0
    with sessions() as session:
        assert store_thresholds.load(session) == {}


def test_starter_set_and_a_broken_judge_configuration(sessions: sessionmaker[Session]) -> None:
    """On a fresh store the starter set loads; a new configuration that fails many
    paraphrases is measured against the one it replaced, flagged stricter, distrusted,
    and production drift on its scores is held back."""
    [good] = run_sentinels(sessions, JUDGE)
    assert good.name == "starter" and good.result.cases >= 50
    assert good.result.supported == good.result.unsupported
    assert not good.drift.drifting
    broken = OfflineJudge(threshold=0.0)
    assert broken.name != JUDGE.name
    [bad] = run_sentinels(sessions, broken)
    assert bad.drift.drifting and bad.drift.direction == "stricter"
    with sessions() as session:
        [alert] = [a for a in store_alerts.open_alerts(session) if a.rule == "judge_drift"]
        trust = store_sentinels.trust_window(session, broken.name)
    assert alert.segment == {"judge": broken.name, "sentinel": "starter"}
    assert alert.details["reference_judge"] == JUDGE.name
    assert alert.details["false_flag_rate"] > alert.details["reference_false_flag_rate"]
    assert trust is not None and trust[1] is None and trust[0].year == 1970
    save_and_score(sessions, [record(n, CONTEXT, route="a") for n in range(5)])
    assert check_drift(sessions, broken.name, CONFIG).held_back
    [again] = run_sentinels(sessions, JUDGE)
    assert not again.drift.drifting  # the trusted configuration is unaffected
