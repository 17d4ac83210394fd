"""Worker jobs called directly, on SQLite and PostgreSQL."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path

from sqlalchemy.orm import Session, sessionmaker

from faithmon import drift, runtime
from faithmon.alerts import ListSink
from faithmon.config import Settings
from faithmon.judge import OfflineJudge
from faithmon.model import Chunk, Judgement, RagRecord
from faithmon.store import repo
from faithmon.worker import check_drift, score_pending

T0 = datetime(2026, 11, 1, tzinfo=UTC)
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
        repo.save_records(session, [record(n, CONTEXT) for n in range(7)])
    assert score_pending(sessions, OfflineJudge(), batch=3) == 7
    assert score_pending(sessions, OfflineJudge(), batch=3) == 0
    with sessions() as session:
        stored = repo.list_records(session)
    assert {s.status for s in stored} == {"scored"}
    assert all(len(s.evaluations) == 1 for s in stored)
    assert {s.evaluations[0].faithfulness for s in stored} == {1.0}


def test_judge_failure_is_recorded_not_scored(sessions: sessionmaker[Session]) -> None:
    """A judge that raises leaves a judge_error with its cause and no score."""
    with sessions.begin() as session:
        repo.save_records(session, [record(0, CONTEXT)])
    assert score_pending(sessions, ExplodingJudge()) == 1
    with sessions() as session:
        [stored] = repo.list_records(session)
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
        repo.save_records(session, records)
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
        assert len(repo.list_alerts(session)) == 1


def test_check_drift_waits_for_a_baseline(sessions: sessionmaker[Session]) -> None:
    """Until the baseline window is full, no detector runs and no alert opens."""
    with sessions.begin() as session:
        repo.save_records(session, [record(n, CONTEXT, route="a") for n in range(10)])
    score_pending(sessions, OfflineJudge())
    config = drift.DriftConfig(dimensions=("route",), baseline_records=50, baseline_days=0)
    result = check_drift(sessions, OfflineJudge().name, config)
    assert not result.baseline_ready and result.changed == ()


def test_scheduled_worker_scores_and_stops_on_sigterm(tmp_path: Path) -> None:
    """`faithmon worker` scores on its schedule and exits cleanly on SIGTERM."""
    url = f"sqlite:///{tmp_path}/worker.db"
    settings = Settings.from_env({}, database_url=url)
    with runtime.open_store(settings) as sessions, sessions.begin() as session:
        repo.save_records(session, [record(n, CONTEXT) for n in range(3)])
    env = {**os.environ, "FAITHMON_DATABASE_URL": url, "FAITHMON_WORKER_SCORE_INTERVAL": "0.2"}
    process = subprocess.Popen(
        [sys.executable, "-m", "faithmon", "worker"], env=env, stderr=subprocess.PIPE, text=True
    )
    try:
        deadline = time.monotonic() + 60
        scored = 0
        while time.monotonic() < deadline and scored < 3 and process.poll() is None:
            with runtime.open_store(settings, upgrade=False) as sessions, sessions() as session:
                scored = repo.counts_by_status(session).get("scored", 0)
            if scored < 3:
                time.sleep(0.1)
        assert scored == 3
        process.send_signal(signal.SIGTERM)
        _, stderr = process.communicate(timeout=30)
        assert process.returncode == 0, stderr
        assert "worker stopping on signal" in stderr
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
