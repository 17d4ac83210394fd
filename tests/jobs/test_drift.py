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
from faithmon.jobs import check_drift, run_sentinels
from faithmon.judge import OfflineJudge
from faithmon.model import RagRecord, SamplingTally, segment_key
from faithmon.store import alerts as store_alerts
from faithmon.store import baselines as store_baselines
from faithmon.store import evaluations as store_evaluations
from faithmon.store import sampling as store_sampling
from faithmon.store import sentinels as store_sentinels
from faithmon.store import thresholds as store_thresholds
from tests.jobs.factory import BAD, CONFIG, CONTEXT, JUDGE, T0, record, save_and_score

# The dialect is not the point here: PostgreSQL runs in the second_backend tier.
pytestmark = pytest.mark.one_backend


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
    # The offline judge measures context relevance: the retrieval stream has detectors too.
    assert set(rows) == {
        f"{stream}|{segment}"
        for stream in ("unsupported", "critical", "retrieval")
        for segment in ("", "route=a")
    }
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


# --- tenant partitions ------------------------------------------------------------------

TENANT_CONFIG = replace(
    CONFIG, dimensions=("route", "tenant", "model"), no_data_dimensions=("route", "tenant")
)
TENANTS = (None, "acme", "globex")


def tenant_traffic(first: int, count: int, drifting: bool = False) -> list[RagRecord]:
    """No tenant, acme and globex in turn; with ``drifting``, every other globex record
    comes from model m2, and half of those are unsupported."""
    records = []
    for n in range(first, first + count):
        tenant = TENANTS[n % 3]
        m2 = drifting and tenant == "globex" and (n // 3) % 2 == 1
        answer = BAD if (m2 and (n // 6) % 2) or n % 30 == 0 else CONTEXT
        labels = {"route": ("a", "b")[n % 2], "model": "m2" if m2 else "m1"}
        records.append(record(n, answer, **labels, **({"tenant": tenant} if tenant else {})))
    return records


def test_two_tenants_one_drifts(sessions: sessionmaker[Session]) -> None:
    """globex's new model alerts under globex's name only, with globex's traces as
    examples; acme's overall stays ok, the records without a tenant are untouched, and
    each partition's baselines are stored under keys that name it."""
    records = tenant_traffic(0, 180) + tenant_traffic(180, 180, drifting=True)
    save_and_score(sessions, records)
    tenant_of = {r.trace_id: r.labels.get("tenant") for r in records}

    run = check_drift(sessions, JUDGE.name, TENANT_CONFIG, now=lambda: T0)

    assert run.baseline_ready and run.building == ()
    assert run.changed and {a.segment.get("tenant") for a in run.changed} == {"globex"}
    states = {(a.rule, tuple(sorted(a.segment.items()))): a.state for a in run.changed}
    assert states[("faithfulness_drift", (("model", "m2"), ("tenant", "globex")))] == "firing"
    for alert in run.changed:
        shown = [e["trace_id"] for e in alert.details["examples"]]
        assert shown and {tenant_of[t] for t in shown} == {"globex"}
    readings = {(segment_key(r.segment), r.stream): r for r in run.readings}
    assert readings[("tenant=acme", "unsupported")].level == "ok"
    assert readings[("tenant=globex", "unsupported")].explained_by == {
        "tenant": "globex",
        "model": "m2",
    }
    untenanted = [r for r in run.readings if not r.partition]
    assert {segment_key(r.segment) for r in untenanted} == {"", "model=m1", "route=a", "route=b"}
    assert all(r.level == "ok" and not r.examples for r in untenanted)
    # The baseline window ends at the 60th record, so 100 untenanted records come after it.
    assert readings[("", "unsupported")].records == 100
    with sessions() as session:
        frozen = store_baselines.load_baselines(session, JUDGE.name)
    assert frozen is not None and frozen.windows == {}
    assert {k for k in frozen.segments if "tenant=" not in k} == {
        "",
        "model=m1",
        "route=a",
        "route=b",
    }
    assert {k for k in frozen.segments if "tenant=acme" in k} == {
        "tenant=acme",
        "model=m1,tenant=acme",
        "route=a,tenant=acme",
        "route=b,tenant=acme",
    }
    assert frozen.segments["tenant=globex"].records == 20


def test_a_new_tenant_waits_for_a_baseline_of_its_own(sessions: sessionmaker[Session]) -> None:
    """A tenant first seen after the baseline froze is building until it has records
    enough, then freezes over its own window; the others' baselines stay as they were."""
    save_and_score(sessions, [r for r in tenant_traffic(0, 180) if r.labels.get("tenant")])
    check_drift(sessions, JUDGE.name, TENANT_CONFIG, now=lambda: T0)
    with sessions() as session:
        before = store_baselines.load_baselines(session, JUDGE.name)
    assert before is not None and "tenant=initech" not in before.segments

    save_and_score(
        sessions, [record(400 + n, CONTEXT, route="a", tenant="initech") for n in range(5)]
    )
    waiting = check_drift(sessions, JUDGE.name, TENANT_CONFIG, now=lambda: T0)
    assert waiting.building == ({"tenant": "initech"},)
    assert not any(r.partition == {"tenant": "initech"} for r in waiting.readings)

    save_and_score(
        sessions, [record(405 + n, CONTEXT, route="a", tenant="initech") for n in range(20)]
    )
    frozen = check_drift(sessions, JUDGE.name, TENANT_CONFIG, now=lambda: T0)
    with sessions() as session:
        after = store_baselines.load_baselines(session, JUDGE.name)
    assert frozen.building == () and after is not None
    assert {k: after.segments[k] for k in before.segments} == before.segments
    assert (after.start, after.end) == (before.start, before.end)
    own = (T0 + timedelta(minutes=400), T0 + timedelta(minutes=409))
    assert after.window_of("tenant=initech") == own == after.window_of("route=a,tenant=initech")
    initech = next(r for r in frozen.readings if r.segment == {"tenant": "initech"})
    assert initech.records == 15 and initech.level == "ok"


def test_drift_status_and_calibrate_show_the_partitions(
    sessions: sessionmaker[Session], database_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`faithmon drift status` shows each tenant's partition under a heading, and
    `faithmon drift calibrate` stores a threshold per partition's detector, which the
    next drift run uses."""
    save_and_score(sessions, tenant_traffic(0, 180) + tenant_traffic(180, 180, drifting=True))
    for name, value in {
        "DATABASE_URL": database_url,
        "DRIFT_DIMENSIONS": "route,tenant,model",
        "DRIFT_BASELINE_RECORDS": "60",
        "DRIFT_BASELINE_DAYS": "0",
        "DRIFT_SEGMENT_MIN_BASELINE": "10",
    }.items():
        monkeypatch.setenv(f"FAITHMON_{name}", value)
    config = replace(TENANT_CONFIG, threshold=None)
    check_drift(sessions, JUDGE.name, config, now=lambda: T0)  # freezes the baselines
    runner = CliRunner()

    status = runner.invoke(main, ["drift", "status"])
    assert status.exit_code == 0, status.output
    lines = status.stdout.splitlines()
    headings = [line for line in lines if line.startswith("-- partition")]
    assert headings == [
        "-- partition without a tenant",
        "-- partition tenant=acme",
        "-- partition tenant=globex",
    ]
    below = lines[lines.index("-- partition tenant=globex") + 1 :]
    assert below[0].startswith("tenant=globex ")
    assert any(line.startswith("model=m2,tenant=globex ") for line in below)

    result = runner.invoke(main, ["drift", "calibrate", "--days", "7", "--json"])
    assert result.exit_code == 0, result.output
    detectors = [row["detector"] for row in json.loads(result.stdout)]
    assert {"unsupported|", "unsupported|tenant=acme", "unsupported|model=m2,tenant=globex"} <= set(
        detectors
    )
    assert all(d.count("tenant=") <= 1 for d in detectors)
    with sessions() as session:
        stored = store_thresholds.load(session)
    readings = check_drift(sessions, JUDGE.name, config, dry_run=True).readings
    assert {drift.detector_key(r.stream, r.segment): r.threshold for r in readings} == stored


def test_without_tenants_the_run_is_what_it_was(sessions: sessionmaker[Session]) -> None:
    """Records without a tenant read the same whether ``tenant`` is a dimension or not."""
    save_and_score(sessions, [r for r in tenant_traffic(0, 360) if "tenant" not in r.labels])
    plain = replace(TENANT_CONFIG, dimensions=("route", "model"))

    with_tenant = check_drift(sessions, JUDGE.name, TENANT_CONFIG, now=lambda: T0, dry_run=True)
    without = check_drift(sessions, JUDGE.name, plain, now=lambda: T0, dry_run=True)

    assert with_tenant.readings and with_tenant.readings == without.readings
    assert with_tenant.silent == without.silent and with_tenant.building == ()
