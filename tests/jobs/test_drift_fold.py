"""The drift run reads only what was scored after its kept state's horizon, and its state
equals a full recompute (`faithmon drift rebuild`) after every run: through late scores
(which rebuild it), an alert that resolves and restarts its detectors, a second judge
configuration rescoring a window, and workers scoring in any order. On SQLite and
PostgreSQL."""

from __future__ import annotations

import random
from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any

import pytest
from click.testing import CliRunner
from sqlalchemy import func, select
from sqlalchemy.orm import Session, sessionmaker

from faithmon.alerts import Policy
from faithmon.cli import main
from faithmon.drift import arl
from faithmon.drift.state_json import dump
from faithmon.jobs import check_drift, drift_fold, rebuild_drift, score_pending
from faithmon.judge import OfflineJudge
from faithmon.model import Judgement
from faithmon.store import baselines as store_baselines
from faithmon.store import drift_state as store_drift_state
from faithmon.store import evaluations as store_evaluations
from faithmon.store import records as store_records
from faithmon.store import work as store_work
from faithmon.store.tables import RecordRow
from tests.jobs.factory import BAD, CONFIG, CONTEXT, JUDGE, T0, record, save_and_score

# The dialect is not the point here: PostgreSQL runs in the second_backend tier.
pytestmark = pytest.mark.one_backend

POLICY = Policy(recovery_runs=2)


def advance(
    sessions: sessionmaker[Session], judge: str, now: datetime, rebuild: bool = False
) -> Any:
    with sessions() as session:
        frozen = store_baselines.load_baselines(session, judge)
        return drift_fold.advance(session, judge, CONFIG, frozen, rebuild, now)


def run(sessions: sessionmaker[Session], judge: str = JUDGE.name, late: bool = False) -> Any:
    """A drift run five minutes after the newest trace (its horizon: the start of that
    trace's hour), a rebuild when scores landed behind the horizon and else not; then the
    state it kept against one folded again from every outcome."""
    with sessions() as session:
        newest = session.scalar(select(func.max(RecordRow.started_at)))
    assert newest is not None
    now = newest + timedelta(minutes=5)
    assert advance(sessions, judge, now).rebuilt == late
    result = check_drift(sessions, judge, CONFIG, now=lambda: now, policy=POLICY)
    kept, again = advance(sessions, judge, now), advance(sessions, judge, now, rebuild=True)
    assert not kept.rebuilt
    assert kept.kept == again.kept
    assert dump(kept.state) == dump(again.state)
    return result


def test_each_run_reads_only_new_scores_and_equals_a_rebuild(
    sessions: sessionmaker[Session],
) -> None:
    """Batches, late scores, a resolution with its restart: after every run the kept state
    is the rebuilt one, and a run with nothing new reads nothing."""
    baseline = [record(n, CONTEXT, route="a", model="m1") for n in range(60)]
    bad = [
        record(60 + n, BAD if n % 4 == 1 else CONTEXT, route="a", model=("m1", "m2")[n % 2])
        for n in range(80)
    ]
    save_and_score(sessions, baseline + bad[:40])
    run(sessions, late=True)  # the first run has no state to continue
    save_and_score(sessions, bad[40:])
    first = run(sessions)
    assert any(a.state == "firing" and a.segment == {"model": "m2"} for a in first.changed)

    # Scored late: traces older than some already folded, in the window and before it.
    late = [record(200 + n, BAD, start=T0 - timedelta(minutes=250), route="b") for n in range(5)]
    late += [record(n, BAD, start=T0 + timedelta(seconds=30), route="b") for n in range(70, 75)]
    late = [replace(r, trace_id=f"{i:04x}{'f' * 28}") for i, r in enumerate(late)]
    save_and_score(sessions, late)
    run(sessions, late=True)

    save_and_score(sessions, [record(140 + n, CONTEXT, route="a", model="m2") for n in range(60)])
    states = [run(sessions) for _ in range(2)]
    resolved = [a for r in states for a in r.changed if a.state == "resolved"]
    assert resolved and all(a.details["reset_at"] for a in resolved)

    save_and_score(sessions, [record(300 + n, CONTEXT, route="a", model="m2") for n in range(30)])
    after = run(sessions)
    m2 = next(
        r for r in after.readings if r.segment == {"model": "m2"} and r.stream == "unsupported"
    )
    assert m2.level == "ok" and m2.records <= 30 + 60
    with sessions() as session:
        restarted = store_drift_state.load(session, JUDGE.name)
    # The resolution restarted its detectors in the run after it.
    assert restarted is not None and "unsupported|model=m2" in restarted.state["since"]


def test_a_rescoring_judge_has_a_state_of_its_own(sessions: sessionmaker[Session]) -> None:
    """Records rescored by another judge configuration fold into that judge's state, in
    two batches, equal to its rebuild; the first judge's state does not move."""
    other = OfflineJudge(threshold=0.5)
    assert other.name != JUDGE.name
    records = [record(n, BAD if n % 7 == 3 else CONTEXT, route="a", model="m1") for n in range(140)]
    save_and_score(sessions, records)
    run(sessions, late=True)
    with sessions() as session:
        mine = store_drift_state.load(session, JUDGE.name)
    with sessions.begin() as session:
        queued = store_work.reset_for_rescore(
            session, other.name, since=T0, until=T0 + timedelta(minutes=70)
        )
    assert queued == 70
    score_pending(sessions, other)
    run(sessions, other.name, late=True)  # its first run: no state kept yet
    with sessions.begin() as session:
        store_work.reset_for_rescore(session, other.name, since=T0)
    score_pending(sessions, other)
    run(sessions, other.name, late=True)  # the rest of the window is behind its horizon
    with sessions() as session:
        theirs = store_drift_state.load(session, other.name)
        unchanged = store_drift_state.load(session, JUDGE.name)
    assert theirs is not None and theirs.watermark > 0
    assert unchanged == mine


def test_rebuild_command_folds_everything_again(
    sessions: sessionmaker[Session], database_url: str, monkeypatch: Any
) -> None:
    """`faithmon drift rebuild` stores the full fold; the next run continues from it."""
    save_and_score(sessions, [record(n, CONTEXT, route="a", model="m1") for n in range(80)])
    run(sessions, late=True)
    with sessions() as session:
        kept = store_drift_state.load(session, JUDGE.name)
    clock = T0 + timedelta(minutes=79 + 5)  # what run() used: five minutes after the newest
    folded = rebuild_drift(sessions, JUDGE.name, CONFIG, now=lambda: clock)
    assert folded.rebuilt and folded.read == 80
    with sessions() as session:
        rebuilt = store_drift_state.load(session, JUDGE.name)
    assert kept is not None and rebuilt is not None and rebuilt.state["live"] == kept.state["live"]
    assert advance(sessions, JUDGE.name, clock).rebuilt is False

    monkeypatch.setenv("FAITHMON_DATABASE_URL", database_url)
    result = CliRunner().invoke(main, ["drift", "rebuild"])
    assert result.exit_code == 0, result.output
    assert "scored records folded" in result.output


def test_the_order_workers_score_in_changes_nothing(sessions: sessionmaker[Session]) -> None:
    """The same verdicts stored in trace order for one judge and shuffled for another fold
    to the same state: drift depends on what was scored, not on who scored it first."""
    records = [
        record(n, BAD if n % 5 == 2 else CONTEXT, route="ab"[n % 2], model=("m1", "m2")[n // 90])
        for n in range(160)
    ]
    with sessions.begin() as session:
        store_records.save_records(session, records)
        ids = dict(session.execute(select(RecordRow.trace_id, RecordRow.id)).all())
    claims = {
        r.trace_id: JUDGE.judge(r.question, [c.text for c in r.chunks], r.answer).claims
        for r in records
    }
    order = [r.trace_id for r in records]
    shuffled = random.Random(7).sample(order, len(order))
    for judge, traces in (("judge/ordered", order), ("judge/shuffled", shuffled)):
        with sessions.begin() as session:
            for trace in traces:
                judgement = Judgement(judge, "ok", claims[trace])
                store_evaluations.save_evaluation(session, ids[trace], judgement)
    states = []
    later = T0 + timedelta(days=1)
    for judge in ("judge/ordered", "judge/shuffled"):
        check_drift(sessions, judge, CONFIG, now=lambda: later, policy=POLICY)
        with sessions() as session:
            kept = store_drift_state.load(session, judge)
        assert kept is not None and kept.state["live"]
        state = {k: v for k, v in kept.state.items() if k not in ("watermark", "solved")}
        # Examples are named by evaluation id, which differs: compare their traces' times.
        for live in state["live"].values():
            live[-2] = [example[:2] for example in live[-2]]
        states.append(state)
    assert states[0] == states[1]


def test_a_status_reads_with_the_thresholds_of_the_alerting_run(
    sessions: sessionmaker[Session],
) -> None:
    """`drift status` agrees with the alerts: in a shell whose settings would derive the
    thresholds from the budget, it reads with the worker's pinned one, kept with the state,
    and writes nothing."""
    save_and_score(sessions, [record(n, CONTEXT, route="a", model="m1") for n in range(140)])
    run(sessions, late=True)
    with sessions() as session:
        before = store_drift_state.load(session, JUDGE.name)
    assert before is not None and before.state["thresholds"]["threshold"] == CONFIG.threshold
    budget = replace(CONFIG, threshold=None, false_alarms=3.0)
    later = T0 + timedelta(minutes=145)
    status = check_drift(sessions, JUDGE.name, budget, now=lambda: later, dry_run=True)
    assert status.readings and {r.threshold for r in status.readings} == {CONFIG.threshold}
    assert status.thresholds_from == {
        "threshold": CONFIG.threshold,
        "false_alarms": CONFIG.false_alarms,
        "wobble": CONFIG.wobble,
    }
    with sessions() as session:
        after = store_drift_state.load(session, JUDGE.name)
    assert after is not None and after.state == before.state
    # Settings equal to the kept ones: nothing to say.
    same = check_drift(sessions, JUDGE.name, CONFIG, now=lambda: later, dry_run=True)
    assert same.thresholds_from is None


def test_a_status_keeps_the_thresholds_it_solved(sessions: sessionmaker[Session]) -> None:
    """A state kept before the thresholds' settings were kept with it: a dry run solves the
    budget thresholds and keeps them in the stored state, so the next `drift status` does
    not solve again; it writes nothing else."""
    arl.forget()  # what other tests solved in this process is not this state's
    save_and_score(sessions, [record(n, CONTEXT, route="a", model="m1") for n in range(140)])
    run(sessions, late=True)
    with sessions() as session, session.begin():
        kept = store_drift_state.load(session, JUDGE.name)
        assert kept is not None
        older = {k: v for k, v in kept.state.items() if k != "thresholds"}
        store_drift_state.save(
            session,
            JUDGE.name,
            store_drift_state.StoredState(kept.fingerprint, kept.watermark, older),
            T0,
        )
    with sessions() as session:
        before = store_drift_state.load(session, JUDGE.name)
    assert before is not None
    arl.forget()
    budget = replace(CONFIG, threshold=None)
    later = T0 + timedelta(minutes=145)
    check_drift(sessions, JUDGE.name, budget, now=lambda: later, dry_run=True)
    with sessions() as session:
        after = store_drift_state.load(session, JUDGE.name)
    assert after is not None
    assert set(after.state["solved"]) > set(before.state["solved"])
    assert {k: v for k, v in after.state.items() if k != "solved"} == {
        k: v for k, v in before.state.items() if k != "solved"
    }
