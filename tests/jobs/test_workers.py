"""Several workers, faults and the judge's failures, on real PostgreSQL and a loopback judge."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from datetime import UTC, datetime

import pytest
from click.testing import CliRunner
from sqlalchemy import func, select
from sqlalchemy.orm import Session, sessionmaker

from faithmon.cli import main
from faithmon.jobs import run_sentinels, score_pending
from faithmon.judge.openai_config import OpenAIJudgeConfig
from faithmon.judge.openai_judge import OpenAIJudge
from faithmon.store import alerts as store_alerts
from faithmon.store import engine as store_engine
from faithmon.store import records as store_records
from faithmon.store import sentinels as store_sentinels
from faithmon.store.tables import EvaluationRow, RecordRow
from tests.jobs.factory import records
from tests.openai_server import SupportingJudge
from tests.store.factory import stored_records
from tests.timing import wait_for


def worker_env(database_url: str, judge_url: str, tmp: str, **extra: str) -> dict[str, str]:
    return {
        **os.environ,
        "FAITHMON_DATABASE_URL": database_url,
        "FAITHMON_JUDGE": "openai",
        "FAITHMON_JUDGE_MODEL": "loopback-judge",
        "FAITHMON_JUDGE_BASE_URL": judge_url,
        "FAITHMON_JUDGE_API_KEY": "test-key",
        "FAITHMON_WORKER_BATCH": "20",
        "FAITHMON_JUDGE_CONCURRENCY": "4",
        "FAITHMON_WORKER_HEARTBEAT_FILE": f"{tmp}/heartbeat",
        "FAITHMON_LOG_LEVEL": "WARNING",
        # Sentinel runs would add their cases to the judge's request count; they are
        # tested on their own.
        "FAITHMON_SENTINEL_INTERVAL": "0",
        **extra,
    }


@pytest.fixture
def pg_sessions(postgres_url: str) -> Iterator[sessionmaker[Session]]:
    """Sessions on the test's own PostgreSQL database, upgraded; closed afterwards."""
    engine = store_engine.make_engine(postgres_url)
    store_engine.upgrade(engine)
    yield store_engine.session_factory(engine)
    engine.dispose()


def seed(sessions: sessionmaker[Session], count: int) -> sessionmaker[Session]:
    with sessions.begin() as session:
        store_records.save_records(session, records(count))
    return sessions


def evaluation_counts(sessions: sessionmaker[Session]) -> tuple[int, int, int]:
    with sessions() as session:
        total = session.scalar(select(func.count()).select_from(EvaluationRow)) or 0
        distinct = session.scalar(select(func.count(func.distinct(EvaluationRow.record_id)))) or 0
        leased = (
            session.scalar(
                select(func.count())
                .select_from(RecordRow)
                .where(RecordRow.lease_owner.is_not(None))
            )
            or 0
        )
    return total, distinct, leased


@pytest.mark.postgres
def test_three_workers_evaluate_each_record_exactly_once(
    postgres_url: str,
    pg_sessions: sessionmaker[Session],
    judge_server: tuple[SupportingJudge, str],
    tmp_path: os.PathLike[str],
) -> None:
    """Three worker processes share 300 records; each is evaluated and judged once."""
    server, url = judge_server
    sessions = seed(pg_sessions, 300)
    env = worker_env(postgres_url, url, str(tmp_path))
    processes = [
        subprocess.Popen(
            [sys.executable, "-m", "faithmon", "worker", "--once"],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(3)
    ]
    outputs = [p.communicate(timeout=300) for p in processes]
    assert [p.returncode for p in processes] == [0, 0, 0], [e for _, e in outputs]
    settled = sorted(int(out.split()[1]) for out, _ in outputs)
    assert sum(settled) == 300 and settled[0] > 0  # all three took a share
    assert evaluation_counts(sessions) == (300, 300, 0)
    assert server.requests == 300


@pytest.mark.postgres
def test_a_worker_killed_mid_batch_loses_nothing(
    postgres_url: str,
    pg_sessions: sessionmaker[Session],
    judge_server: tuple[SupportingJudge, str],
    tmp_path: os.PathLike[str],
) -> None:
    """SIGKILL mid-batch: leases expire, another worker finishes, each record once."""
    server, url = judge_server
    server.latency = 0.05
    sessions = seed(pg_sessions, 200)
    env = worker_env(
        postgres_url,
        url,
        str(tmp_path),
        FAITHMON_WORKER_LEASE_SECONDS="2",
        FAITHMON_WORKER_SCORE_INTERVAL="0.2",
    )
    victim = subprocess.Popen(
        [sys.executable, "-m", "faithmon", "worker"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    wait_for(lambda: evaluation_counts(sessions)[0] >= 30, 60, "30 evaluations", 0.05)
    victim.send_signal(signal.SIGKILL)
    victim.communicate(timeout=30)
    done_before = evaluation_counts(sessions)[0]
    assert 30 <= done_before < 200

    def another_worker_finished() -> bool:
        # Until the killed worker's leases expire (2 s) a run leaves its records alone.
        subprocess.run(
            [sys.executable, "-m", "faithmon", "worker", "--once"],
            env=env,
            capture_output=True,
            timeout=120,
            check=True,
        )
        return evaluation_counts(sessions)[0] >= 200

    wait_for(another_worker_finished, 120, "another worker to finish the queue", 0.5)
    assert evaluation_counts(sessions) == (200, 200, 0)


@pytest.mark.postgres
def test_401_blocks_the_judge_configuration_without_a_retry_storm(
    postgres_url: str,
    pg_sessions: sessionmaker[Session],
    judge_server: tuple[SupportingJudge, str],
    tmp_path: os.PathLike[str],
) -> None:
    """One refused call blocks the configuration, raises an alert and leaves records pending."""
    server, url = judge_server
    server.failures = [
        (401, {}, {"message": "invalid api key", "type": "invalid_request_error"})
        for _ in range(100)
    ]
    sessions = seed(pg_sessions, 50)
    env = worker_env(postgres_url, url, str(tmp_path), FAITHMON_JUDGE_CONCURRENCY="1")
    for _ in range(2):  # a second run sends nothing either: no retry across runs
        done = subprocess.run(
            [sys.executable, "-m", "faithmon", "worker", "--once"],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=True,
        )
    assert server.requests == 1
    with sessions() as session:
        statuses = store_records.counts_by_status(session)
        alerts = store_alerts.list_alerts(session)
    assert statuses == {"pending": 50}
    assert [(a.rule, a.state) for a in alerts] == [("judge_error", "firing")]
    # The commands a person runs next, in-process: their process is not the point.
    runner = CliRunner(env=env)
    status = json.loads(runner.invoke(main, ["judge", "status", "--json"]).stdout)
    assert "HTTP 401" in status["blocked"][0]["reason"]
    unblocked = runner.invoke(main, ["judge", "unblock"])
    assert unblocked.exit_code == 0 and "unblocked 1" in unblocked.stdout
    server.failures.clear()  # the key was fixed
    assert (
        "scored 50 records"
        in subprocess.run(
            [sys.executable, "-m", "faithmon", "worker", "--once"],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    )
    assert done.returncode == 0


def test_429_then_200_is_scored_with_the_retry_counted(
    sessions: sessionmaker[Session], judge_server: tuple[SupportingJudge, str]
) -> None:
    """A rate-limited call is retried after Retry-After and the retry shows in usage."""
    server, url = judge_server
    server.failures = [(429, {"Retry-After": "0"}, {"message": "slow down", "type": "rate"})]
    with sessions.begin() as session:
        store_records.save_records(session, records(1))
    judge = OpenAIJudge(
        OpenAIJudgeConfig(model="loopback-judge", base_url=url, api_key="test-key", backoff=0.01)
    )
    assert score_pending(sessions, judge) == 1
    with sessions() as session:
        [stored] = stored_records(session)
    [evaluation] = stored.evaluations
    assert stored.status == "scored" and evaluation.faithfulness == 1.0
    assert evaluation.usage.retries == 1 and evaluation.usage.calls == 1
    assert server.requests == 2


def test_retryable_failure_defers_then_gives_up_as_judge_error(
    sessions: sessionmaker[Session], judge_server: tuple[SupportingJudge, str]
) -> None:
    """Persistent 503s put the record back with a backoff, then settle it as judge_error."""
    from faithmon.jobs import RetryPolicy

    server, url = judge_server
    server.failures = [(503, {"Retry-After": "0"}, {"message": "down", "type": "server"})] * 20
    with sessions.begin() as session:
        store_records.save_records(session, records(1))
    judge = OpenAIJudge(
        OpenAIJudgeConfig(
            model="loopback-judge", base_url=url, api_key="test-key", backoff=0.01, max_attempts=2
        )
    )
    clock = [datetime.now(UTC)]
    policy = RetryPolicy(max_retries=2, base_delay=60)
    assert score_pending(sessions, judge, retry=policy, now=lambda: clock[-1]) == 0
    with sessions() as session:
        row = session.scalars(select(RecordRow)).one()
    assert (row.status, row.attempts) == ("pending", 1) and "HTTP 503" in (row.last_error or "")
    assert score_pending(sessions, judge, retry=policy, now=lambda: clock[-1]) == 0  # not due
    with sessions.begin() as session:
        session.execute(RecordRow.__table__.update().values(next_attempt_at=None))
    assert score_pending(sessions, judge, retry=policy, now=lambda: clock[-1]) == 0
    with sessions.begin() as session:
        session.execute(RecordRow.__table__.update().values(next_attempt_at=None))
    assert score_pending(sessions, judge, retry=policy, now=lambda: clock[-1]) == 1
    with sessions() as session:
        [stored] = stored_records(session)
    assert stored.status == "judge_error" and stored.evaluations[0].faithfulness is None


@pytest.mark.postgres
def test_sentinel_run_on_a_refused_judge_blocks_it_after_one_call(
    pg_sessions: sessionmaker[Session], judge_server: tuple[SupportingJudge, str]
) -> None:
    """A 401 during a sentinel run blocks the configuration at once: no storm of refused
    calls, no partial run recorded as a judge that got worse, and scoring waits too."""
    server, url = judge_server
    server.failures = [
        (401, {}, {"message": "invalid api key", "type": "invalid_request_error"})
    ] * 100
    judge = OpenAIJudge(
        OpenAIJudgeConfig(model="loopback-judge", base_url=url, api_key="test-key", backoff=0.01)
    )
    assert run_sentinels(pg_sessions, judge, concurrency=1) == []
    assert server.requests == 1
    with pg_sessions() as session:
        alerts = store_alerts.list_alerts(session)
        runs = store_sentinels.list_runs(session)
    assert [(a.rule, a.state) for a in alerts] == [("judge_error", "firing")]
    assert runs == []
    seed(pg_sessions, 3)
    assert score_pending(pg_sessions, judge) == 0
    assert run_sentinels(pg_sessions, judge, concurrency=1) == []
    assert server.requests == 1
