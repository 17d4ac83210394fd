"""The worker's health check on a real store: a judge behind a real OpenAI-compatible
endpoint on 127.0.0.1 that fails too many calls raises judge_error (cause error_rate)
through the routes like any alert, and it resolves once the failures are a small share;
a receiver's heartbeat that goes silent raises ingest_error."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy.orm import Session, sessionmaker

from faithmon.alerts import ListSink
from faithmon.jobs import RetryPolicy, score_pending
from faithmon.jobs.health import HealthBounds, check_health
from faithmon.judge.openai_config import OpenAIJudgeConfig
from faithmon.judge.openai_judge import OpenAIJudge
from faithmon.model.health import ReceiverStatus
from faithmon.store import alerts as store_alerts
from faithmon.store import receivers as store_receivers
from faithmon.store import records as store_records
from tests.jobs.factory import records
from tests.openai_server import SupportingJudge
from tests.store.factory import stored_records

# The dialect is not the point here: PostgreSQL runs in the second_backend tier.
pytestmark = pytest.mark.one_backend

BOUNDS = HealthBounds(judge_error_rate=0.2, judge_error_min=20, receiver_stale=timedelta(minutes=2))


def test_a_failing_judge_raises_judge_error_then_resolves(
    sessions: sessionmaker[Session],
    judge_server: tuple[SupportingJudge, str],
) -> None:
    """8 of 20 calls refused with 503: judge_error fires with its cause; after 60 good
    evaluations the share is under the bound and it resolves. Nothing is scored low."""
    server, url = judge_server
    server.failures = [(503, {"Retry-After": "0"}, {"message": "down", "type": "server"})] * 8
    judge = OpenAIJudge(
        OpenAIJudgeConfig(
            model="loopback-judge", base_url=url, api_key="test-key", backoff=0.01, max_attempts=1
        )
    )
    with sessions.begin() as session:
        store_records.save_records(session, records(20))
    score_pending(sessions, judge, retry=RetryPolicy(max_retries=0))
    sink = ListSink()
    (fired,) = check_health(sessions, judge.name, BOUNDS, [sink])
    assert (fired.rule, fired.state) == ("judge_error", "firing")
    assert fired.segment == {"judge": judge.name, "cause": "error_rate"}
    assert fired.details["errors"] == 8 and fired.details["evaluations"] == 20
    assert "HTTP 503" in fired.details["top_errors"][0]["error"]
    assert sink.alerts == [fired]
    with sessions() as session:
        stored = stored_records(session)
    scores = [e.faithfulness for s in stored for e in s.evaluations if e.status == "judge_error"]
    assert len(scores) == 8 and set(scores) == {None}

    more = [replace(r, trace_id=f"{n + 100:032x}") for n, r in enumerate(records(60))]
    with sessions.begin() as session:
        store_records.save_records(session, more)
    score_pending(sessions, judge, retry=RetryPolicy(max_retries=0))
    (resolved,) = check_health(sessions, judge.name, BOUNDS, [sink])
    assert resolved.state == "resolved" and resolved.id == fired.id
    assert [a.state for a in sink.alerts] == ["firing", "resolved"]


def test_a_silent_receiver_raises_ingest_error(sessions: sessionmaker[Session]) -> None:
    """A heartbeat older than the bound fires; a fresh beat from the same place resolves."""
    now = datetime.now(UTC)
    old = ReceiverStatus("rx-1:4318", now - timedelta(hours=1), now - timedelta(minutes=5))
    with sessions.begin() as session:
        store_receivers.beat(session, old)
    (fired,) = check_health(sessions, "offline/v10", BOUNDS)
    assert (fired.rule, fired.segment, fired.state) == (
        "ingest_error",
        {"receiver": "rx-1:4318"},
        "firing",
    )
    assert fired.details["cause"] == "silent"
    with sessions.begin() as session:
        store_receivers.beat(session, replace(old, started_at=now, beat_at=now))
    (resolved,) = check_health(sessions, "offline/v10", BOUNDS)
    assert resolved.state == "resolved"
    with sessions() as session:
        assert store_alerts.open_alerts(session) == []
