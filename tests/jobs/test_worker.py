"""Worker jobs called directly, on SQLite and PostgreSQL."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from collections.abc import Sequence
from datetime import timedelta
from pathlib import Path

import pytest
from sqlalchemy import delete, func, select
from sqlalchemy.orm import Session, sessionmaker

from faithmon import drift
from faithmon.alerts import ListSink
from faithmon.cli import wiring
from faithmon.config import Settings
from faithmon.jobs import RetryPolicy, check_drift, score_pending
from faithmon.jobs.score import _settle
from faithmon.judge import OfflineJudge
from faithmon.model import Chunk, Judgement, RagRecord
from faithmon.store import alerts as store_alerts
from faithmon.store import records as store_records
from faithmon.store.tables import RecordRow
from tests.store.factory import stored_records
from tests.timing import days_ago, wait_for

# Relative to today: a fixed date ages past the scheduled worker's retention window.
T0 = days_ago(1)
CONTEXT = "Order A17 shipped on 3 March by courier."


def record(n: int, answer: str, **labels: str) -> RagRecord:
    return RagRecord(
        trace_id=f"{n + 1:032x}",
        question="Where is order A17?",
        answer=answer,
        chunks=(Chunk(0, CONTEXT),),
        labels=labels,
        started_at=T0 + timedelta(minutes=n),
    )


class ExplodingJudge:
    """A judge whose endpoint is down."""

    name = "exploding/v1"

    def judge(self, question: str, chunks: Sequence[str], answer: str) -> Judgement:
        raise ConnectionError("judge endpoint unreachable")


def test_score_pending_scores_everything_once(sessions: sessionmaker[Session]) -> None:
    """Every pending record gets one evaluation; a second run finds nothing to do."""
    with sessions.begin() as session:
        store_records.save_records(session, [record(n, CONTEXT) for n in range(7)])
    assert score_pending(sessions, OfflineJudge(), batch=3) == 7
    assert score_pending(sessions, OfflineJudge(), batch=3) == 0
    with sessions() as session:
        stored = stored_records(session)
    assert {s.status for s in stored} == {"scored"}
    assert all(len(s.evaluations) == 1 for s in stored)
    assert {s.evaluations[0].faithfulness for s in stored} == {1.0}


def test_judge_failure_is_recorded_not_scored(sessions: sessionmaker[Session]) -> None:
    """A judge that raises leaves a judge_error with its cause and no score."""
    with sessions.begin() as session:
        store_records.save_records(session, [record(0, CONTEXT)])
    assert score_pending(sessions, ExplodingJudge()) == 1
    with sessions() as session:
        [stored] = stored_records(session)
    assert stored.status == "judge_error"
    [evaluation] = stored.evaluations
    assert evaluation.faithfulness is None
    assert evaluation.error == "ConnectionError: judge endpoint unreachable"


def test_check_drift_fires_for_the_drifting_segment_only(sessions: sessionmaker[Session]) -> None:
    """A model that starts inventing claims fires; the routes it serves do not."""
    bad = CONTEXT + " It arrives tomorrow."
    records = [record(n, CONTEXT, route=("a", "b")[n % 2], model="m1") for n in range(60)]
    records += [
        record(60 + n, bad if n % 2 == 0 else CONTEXT, route=("a", "b")[n % 2 == 0], model="m2")
        for n in range(60)
    ]
    records += [record(120 + n, CONTEXT, route=("a", "b")[n % 2], model="m1") for n in range(60)]
    with sessions.begin() as session:
        store_records.save_records(session, records)
    score_pending(sessions, OfflineJudge())
    config = drift.DriftConfig(
        dimensions=("route", "model"),
        threshold=8,
        baseline_records=50,
        baseline_days=0,
        segment_min_baseline=10,
    )
    sink = ListSink()
    first = check_drift(sessions, OfflineJudge().name, config, [sink], now=lambda: T0)
    assert first.baseline_ready
    states = {tuple(a.segment.items()): a.state for a in first.changed}
    assert states == {(("model", "m2"),): "firing"}
    assert [a.id for a in sink.alerts] == [a.id for a in first.changed]
    again = check_drift(sessions, OfflineJudge().name, config, [sink], now=lambda: T0)
    assert [a.state for a in again.changed] == ["firing"]
    with sessions() as session:
        assert len(store_alerts.list_alerts(session)) == 1


def test_check_drift_waits_for_a_baseline(sessions: sessionmaker[Session]) -> None:
    """Until the baseline window is full, no detector runs and no alert opens."""
    with sessions.begin() as session:
        store_records.save_records(session, [record(n, CONTEXT, route="a") for n in range(10)])
    score_pending(sessions, OfflineJudge())
    config = drift.DriftConfig(dimensions=("route",), baseline_records=50, baseline_days=0)
    result = check_drift(sessions, OfflineJudge().name, config)
    assert not result.baseline_ready and result.changed == ()


def test_scheduled_worker_scores_and_stops_on_sigterm(tmp_path: Path) -> None:
    """`faithmon worker` scores on its schedule and exits cleanly on SIGTERM."""
    url = f"sqlite:///{tmp_path}/worker.db"
    settings = Settings.from_env({}, database_url=url)
    with wiring.open_store(settings) as sessions, sessions.begin() as session:
        store_records.save_records(session, [record(n, CONTEXT) for n in range(3)])
    env = {**os.environ, "FAITHMON_DATABASE_URL": url, "FAITHMON_WORKER_SCORE_INTERVAL": "0.2"}
    process = subprocess.Popen(
        [sys.executable, "-m", "faithmon", "worker"], env=env, stderr=subprocess.PIPE, text=True
    )
    try:

        def all_scored() -> bool:
            assert process.poll() is None, "the worker exited early"
            with wiring.open_store(settings, upgrade=False) as sessions, sessions() as session:
                return store_records.counts_by_status(session) == {"scored": 3}

        wait_for(all_scored, 60, "the worker to score 3 records", 0.1)
        process.send_signal(signal.SIGTERM)
        _, stderr = process.communicate(timeout=30)
        assert process.returncode == 0, stderr
        assert "worker stopping on signal" in stderr
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()


def _delete_record(sessions: sessionmaker[Session], trace_id: str) -> None:
    with sessions.begin() as session:
        session.execute(delete(RecordRow).where(RecordRow.trace_id == trace_id))


def test_settle_stores_the_rest_when_a_record_was_deleted(
    sessions: sessionmaker[Session], caplog: pytest.LogCaptureFixture
) -> None:
    """A record deleted under its lease is logged once; the rest of the batch is stored."""
    with sessions.begin() as session:
        store_records.save_records(session, [record(n, CONTEXT) for n in range(3)])
        claimed = store_records.claim_pending(session, "worker-a", limit=3, lease_seconds=300)
    gone_id, gone = claimed[1]
    _delete_record(sessions, gone.trace_id)
    judge = OfflineJudge()
    outcomes = [
        (rid, judge.judge(r.question, [c.text for c in r.chunks], r.answer)) for rid, r in claimed
    ]

    saved = _settle(sessions, judge, outcomes, {}, RetryPolicy(), (), T0, dict(claimed), ("route",))

    assert [rid for rid, _ in saved] == [claimed[0][0], claimed[2][0]]
    with sessions() as session:
        stored = stored_records(session)
    assert {s.record.trace_id: s.status for s in stored} == {
        claimed[0][1].trace_id: "scored",
        claimed[2][1].trace_id: "scored",
    }
    assert all(len(s.evaluations) == 1 for s in stored)
    [warning] = [r for r in caplog.records if "deleted while being judged" in r.getMessage()]
    assert str(gone_id) in warning.getMessage() and gone.trace_id in warning.getMessage()
    assert gone.question not in warning.getMessage() and CONTEXT not in warning.getMessage()


class DeletingJudge:
    """The offline judge, but the record whose answer is ``answer`` is deleted mid-call."""

    def __init__(self, sessions: sessionmaker[Session], trace_id: str, answer: str) -> None:
        self.inner = OfflineJudge()
        self.name = self.inner.name
        self.sessions, self.trace_id, self.answer = sessions, trace_id, answer

    def judge(self, question: str, chunks: Sequence[str], answer: str) -> Judgement:
        if answer == self.answer:
            _delete_record(self.sessions, self.trace_id)
        return self.inner.judge(question, chunks, answer)


def test_score_pending_goes_on_after_a_record_vanishes(sessions: sessionmaker[Session]) -> None:
    """The worker keeps scoring after a record it holds is deleted mid-call."""
    records = [record(n, f"{CONTEXT} ({n})") for n in range(4)]
    with sessions.begin() as session:
        store_records.save_records(session, records)
    judge = DeletingJudge(sessions, records[1].trace_id, records[1].answer)
    assert score_pending(sessions, judge, batch=4, concurrency=2) == 3
    with sessions() as session:
        stored = stored_records(session)
    assert sorted(s.record.trace_id for s in stored) == sorted(
        r.trace_id for n, r in enumerate(records) if n != 1
    )
    assert {s.status for s in stored} == {"scored"}


class LeaseCountingJudge:
    """The offline judge, noting at each call how many records are leased, and, when
    ``pause`` is set, waiting that long first (an LLM judge's round trip)."""

    def __init__(self, sessions: sessionmaker[Session], pause: float = 0.0) -> None:
        self.inner = OfflineJudge()
        self.name = self.inner.name
        self.sessions, self.pause = sessions, pause
        self.leased: list[int] = []

    def judge(self, question: str, chunks: Sequence[str], answer: str) -> Judgement:
        with self.sessions() as session:
            held = session.scalar(
                select(func.count())
                .select_from(RecordRow)
                .where(RecordRow.lease_owner.is_not(None))
            )
        self.leased.append(int(held or 0))
        if self.pause:
            threading.Event().wait(self.pause)
        return self.inner.judge(question, chunks, answer)


def test_a_slow_judge_holds_twice_its_concurrency_and_a_fast_one_a_batch(
    sessions: sessionmaker[Session],
) -> None:
    """Leases run ahead of the calls by twice the concurrency while calls are slow (an
    LLM's round trip: no record waits behind a lease held for long), and by up to a
    batch once they are quick, so a fast judge settles many records per transaction."""
    with sessions.begin() as session:
        store_records.save_records(session, [record(n, CONTEXT) for n in range(8)])
    slow = LeaseCountingJudge(sessions, pause=0.6)
    assert score_pending(sessions, slow, batch=20, concurrency=2) == 8
    assert max(slow.leased) <= 4 and len(slow.leased) == 8

    with sessions.begin() as session:
        session.execute(delete(RecordRow))
        store_records.save_records(session, [record(100 + n, CONTEXT) for n in range(300)])
    fast = LeaseCountingJudge(sessions)
    assert score_pending(sessions, fast, batch=50, concurrency=1) == 300
    assert max(fast.leased) > 2 and max(fast.leased) <= 50


def test_a_job_lookup_during_a_stop_is_a_clean_stop() -> None:
    """APScheduler's loop can look up a job the shutdown removed when a job ends as
    SIGTERM arrives (seen as 'unexpected JobLookupError' and exit 1): while stopping,
    that is a clean stop; at any other time it is still an error."""
    from apscheduler.jobstores.base import JobLookupError
    from apscheduler.schedulers.blocking import BlockingScheduler

    from faithmon import worker
    from faithmon.jobs import STOPPING

    class Racing(BlockingScheduler):
        def start(self, *args: object, **kwargs: object) -> None:
            raise JobLookupError("3d225cbd28f14fa998fc03cf9a91603c")

    handler = signal.getsignal(signal.SIGTERM)
    STOPPING.set()
    try:
        worker.run([], Racing())
        STOPPING.clear()
        with pytest.raises(JobLookupError):
            worker.run([], Racing())
    finally:
        STOPPING.clear()
        signal.signal(signal.SIGTERM, handler)
