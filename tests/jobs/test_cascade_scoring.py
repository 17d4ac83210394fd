"""The cascade judge in the scoring job, on SQLite and PostgreSQL, with the real openai
client against a loopback endpoint: usage, the daily budget, failures and stages."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from faithmon.api.app import create_app
from faithmon.api.v1 import ReadOptions
from faithmon.cli import wiring
from faithmon.config import Settings
from faithmon.ingest.pipeline import Pipeline
from faithmon.ingest.sampler import KeepAll
from faithmon.ingest.scrub import identity
from faithmon.jobs import RetryPolicy, score_pending
from faithmon.judge.cascade import CascadeJudge
from faithmon.model import Chunk, Judgement, RagRecord, Usage
from faithmon.store import evaluations as store_evaluations
from faithmon.store import records as store_records
from faithmon.store import work
from faithmon.store.tables import EvaluationRow, RecordRow
from tests.api.client import get
from tests.judge.factory import CHUNKS, SURE, UNSURE, Confident, llm
from tests.openai_server import OpenAIServer, Step, reply
from tests.servers import serve_in_thread

# The dialect is not the point here: PostgreSQL runs in the second_backend tier.
pytestmark = pytest.mark.one_backend

T0 = datetime.now(UTC) - timedelta(hours=1)
LLM_REPLY = [
    {
        "sentence": 0,
        "claim": "Money comes back within a week.",
        "chunk": 1,
        "quote": "Refunds take 5 business days",
        "verdict": "supported",
    }
]


def record(n: int, answer: str) -> RagRecord:
    return RagRecord(
        trace_id=f"{n + 1:032x}",
        question="Where is order A17?",
        answer=answer,
        chunks=tuple(Chunk(i, text) for i, text in enumerate(CHUNKS)),
        labels={"route": "shipping"},
        started_at=T0 + timedelta(minutes=n),
    )


@pytest.fixture
def server() -> Iterator[tuple[OpenAIServer, str]]:
    scripted = OpenAIServer()
    with serve_in_thread(scripted.app) as url:
        yield scripted, url + "/v1"


def make_cascade(url: str, **changes: object) -> CascadeJudge:
    return CascadeJudge(Confident({SURE: 0.99, UNSURE: 0.3}), llm(url, **changes), 0.9)


def evaluations(session: Session, judge: str) -> list[Judgement]:
    rows = session.scalars(select(EvaluationRow).where(EvaluationRow.judge == judge))
    return [store_evaluations.to_judgement(row) for row in rows]


def status_of(sessions: sessionmaker[Session], trace_id: str) -> RecordRow:
    with sessions() as session:
        return session.scalars(select(RecordRow).where(RecordRow.trace_id == trace_id)).one()


def test_usage_counts_only_the_calls_made(
    sessions: sessionmaker[Session], server: tuple[OpenAIServer, str]
) -> None:
    """A settled trace is stored with no call; an uncertain one with its one call, and
    each stored claim keeps the stage that decided it."""
    scripted, url = server
    scripted.play(reply(LLM_REPLY))
    with sessions.begin() as session:
        store_records.save_records(session, [record(0, SURE), record(1, f"{SURE} {UNSURE}")])
    judge = make_cascade(url)
    assert score_pending(sessions, judge) == 2
    assert len(scripted.requests) == 1
    with sessions() as session:
        usage = work.usage_by_day(session)
        stored = evaluations(session, judge.name)
    assert [(u["judge"], u["calls"]) for u in usage] == [(judge.name, 1)]
    assert sorted([c.stage for c in j.claims] for j in stored) == [
        ["offline"],
        ["offline", "llm"],
    ]
    assert sorted(j.usage.calls for j in stored) == [0, 1]


def test_spent_budget_scores_settled_traces_and_keeps_the_rest_pending(
    sessions: sessionmaker[Session], server: tuple[OpenAIServer, str]
) -> None:
    """With the day's budget spent, a trace settled offline is scored, one needing the LLM
    waits pending (until the next UTC day), and no call is made."""
    scripted, url = server
    now = datetime.now(UTC)
    with sessions.begin() as session:
        store_records.save_records(session, [record(0, f"{SURE} {UNSURE}"), record(1, SURE)])
        work.add_usage(session, "some judge", Usage(1, 900, 100), now)
    judge = make_cascade(url)
    assert score_pending(sessions, judge, daily_token_budget=1000, now=lambda: now) == 1
    assert scripted.requests == []
    waiting, scored = (
        status_of(sessions, record(0, "").trace_id),
        status_of(sessions, record(1, "").trace_id),
    )
    assert scored.status == "scored"
    assert waiting.status == "pending" and waiting.lease_owner is None
    assert waiting.next_attempt_at is not None
    assert waiting.next_attempt_at.replace(tzinfo=UTC) > now and not waiting.attempts
    # The LLM-only judge does not score at all while the budget is spent.
    with sessions.begin() as session:
        store_records.save_records(session, [record(2, SURE)])
    assert score_pending(sessions, judge.second, daily_token_budget=1000, now=lambda: now) == 0
    assert status_of(sessions, record(2, "").trace_id).status == "pending"


def test_an_llm_failure_is_that_traces_judge_error(
    sessions: sessionmaker[Session], server: tuple[OpenAIServer, str]
) -> None:
    """A permanent LLM failure stores judge_error for its trace; the settled trace of the
    same run is scored."""
    scripted, url = server
    scripted.play(Step(status=400, error={"message": "bad request", "type": "invalid"}))
    with sessions.begin() as session:
        store_records.save_records(session, [record(0, f"{SURE} {UNSURE}"), record(1, SURE)])
    judge = make_cascade(url, max_attempts=1)
    assert score_pending(sessions, judge, retry=RetryPolicy(max_retries=0)) == 2
    failed, scored = (
        status_of(sessions, record(0, "").trace_id),
        status_of(sessions, record(1, "").trace_id),
    )
    assert (failed.status, scored.status) == ("judge_error", "scored")
    with sessions() as session:
        errors = [j for j in evaluations(session, judge.name) if j.status == "judge_error"]
    assert len(errors) == 1 and "HTTP 400" in (errors[0].error or "")
    assert errors[0].faithfulness is None


def test_the_api_shows_each_claims_stage(
    sessions: sessionmaker[Session], server: tuple[OpenAIServer, str]
) -> None:
    """GET /api/v1/traces/{id} gives every claim's stage."""
    scripted, url = server
    scripted.play(reply(LLM_REPLY))
    with sessions.begin() as session:
        store_records.save_records(session, [record(0, f"{SURE} {UNSURE}")])
    judge = make_cascade(url)
    assert score_pending(sessions, judge) == 1
    settings = Settings.from_env({"FAITHMON_SCRUB_KEY": "cascade-test-key-0123456"})
    app = create_app(
        Pipeline(lambda batch: None, sampler=KeepAll(), scrubber=identity),
        sessions=sessions,
        auth=wiring.make_auth(settings, sessions, "127.0.0.1"),
        reads=ReadOptions(judge=judge.name),
    )
    with serve_in_thread(app) as api:
        trace = get(api, f"/api/v1/traces/{record(0, '').trace_id}")
    [evaluation] = trace["evaluations"]
    assert evaluation["judge"] == judge.name
    assert [(c["text"], c["stage"]) for c in evaluation["claims"]] == [
        (SURE, "offline"),
        (UNSURE, "llm"),
    ]
