"""Store queries on SQLite and PostgreSQL."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import Engine, select
from sqlalchemy.orm import Session, sessionmaker

from faithmon.model import Alert, Chunk, Claim, Judgement, RagRecord
from faithmon.store import alerts as store_alerts
from faithmon.store import outcomes as store_outcomes
from faithmon.store import repo
from faithmon.store.tables import Base, RecordRow
from tests.timing import days_ago

T0 = days_ago(1, hour=12)


def make_record(n: int, chunks: int = 1, **labels: str) -> RagRecord:
    return RagRecord(
        trace_id=f"{n:032x}",
        question=f"question {n}",
        answer="Order A17 shipped on 3 March.",
        chunks=tuple(
            Chunk(position=i, text=f"chunk {i}", id=f"doc-{i}", score=0.5, metadata={"k": i})
            for i in range(chunks)
        ),
        labels=labels or {"route": "billing"},
        started_at=T0 + timedelta(minutes=n),
    )


def test_schema_matches_models(engine: Engine) -> None:
    """The migrations build exactly the schema the ORM models describe."""
    with engine.connect() as connection:
        diff = compare_metadata(MigrationContext.configure(connection), Base.metadata)
    assert diff == []


def test_save_records_is_idempotent(sessions: sessionmaker[Session]) -> None:
    """A trace id stored twice keeps one row; a record without chunks is no_context."""
    with sessions.begin() as session:
        assert repo.save_records(session, [make_record(1), make_record(2, chunks=0)]) == 2
    with sessions.begin() as session:
        assert repo.save_records(session, [make_record(1), make_record(3)]) == 1
    with sessions() as session:
        stored = {s.record.trace_id: s for s in repo.list_records(session)}
    assert len(stored) == 3
    assert stored[f"{2:032x}"].status == "no_context"
    first = stored[f"{1:032x}"]
    assert first.status == "pending"
    assert first.record.chunks[0] == Chunk(0, "chunk 0", "doc-0", 0.5, {"k": 0})
    assert first.record.started_at == T0 + timedelta(minutes=1)


def test_claims_are_disjoint_and_leases_expire(sessions: sessionmaker[Session]) -> None:
    """Two owners never lease the same record; an expired lease is claimed again."""
    with sessions.begin() as session:
        repo.save_records(session, [make_record(n) for n in range(5)])
    with sessions.begin() as session:
        first = repo.claim_pending(session, "w1", 3, lease_seconds=300)
    with sessions.begin() as session:
        second = repo.claim_pending(session, "w2", 3, lease_seconds=300)
    ids_first = {i for i, _ in first}
    ids_second = {i for i, _ in second}
    assert len(ids_first) == 3 and len(ids_second) == 2
    assert not ids_first & ids_second
    with sessions.begin() as session:
        session.execute(
            RecordRow.__table__.update().values(lease_expires=datetime.now(UTC) - timedelta(1))
        )
    with sessions.begin() as session:
        again = repo.claim_pending(session, "w3", 10, lease_seconds=300)
    assert {i for i, _ in again} == ids_first | ids_second


def test_evaluation_written_once_per_judge(sessions: sessionmaker[Session]) -> None:
    """A second evaluation by the same judge is ignored; the record becomes scored."""
    with sessions.begin() as session:
        repo.save_records(session, [make_record(1)])
    with sessions.begin() as session:
        [(record_id, _)] = repo.claim_pending(session, "w", 10, 60)
    judgement = Judgement(
        judge="offline/v1",
        status="ok",
        claims=(Claim("Order A17 shipped.", "supported", 0, "Order A17 shipped", True),),
    )
    with sessions.begin() as session:
        assert repo.save_evaluation(session, record_id, judgement)
    with sessions.begin() as session:
        assert not repo.save_evaluation(session, record_id, judgement)
    with sessions() as session:
        [stored] = repo.list_records(session)
        row = session.scalars(select(RecordRow)).one()
    assert stored.status == "scored"
    assert stored.evaluations == (judgement,)
    assert row.lease_owner is None


def test_judge_error_is_not_an_outcome(sessions: sessionmaker[Session]) -> None:
    """A judge_error evaluation settles the record but never reaches drift outcomes."""
    with sessions.begin() as session:
        repo.save_records(session, [make_record(1), make_record(2)])
    with sessions.begin() as session:
        claimed = repo.claim_pending(session, "w", 10, 60)
    bad = Judgement(judge="j", status="judge_error", error="TimeoutError: slow")
    good = Judgement(judge="j", status="ok", claims=(Claim("x", "unsupported"),))
    with sessions.begin() as session:
        repo.save_evaluation(session, claimed[0][0], bad)
        repo.save_evaluation(session, claimed[1][0], good)
    with sessions() as session:
        outcomes = store_outcomes.outcomes(session, "j")
        statuses = repo.counts_by_status(session)
    assert [o.trace_id for o in outcomes] == [f"{2:032x}"]
    assert outcomes[0].unsupported and outcomes[0].unsupported_claims == ("x",)
    assert statuses == {"judge_error": 1, "scored": 1}


def test_alerts_round_trip(sessions: sessionmaker[Session]) -> None:
    """Alerts are inserted, updated in place and listed with their segment."""
    alert = Alert(
        rule="faithfulness_drift",
        segment={"model": "m2"},
        state="pending",
        severity="warning",
        opened_at=T0,
        updated_at=T0,
        details={"statistic": 8.0},
    )
    with sessions.begin() as session:
        [saved] = store_alerts.save_alerts(session, [alert])
    assert saved.id is not None
    with sessions.begin() as session:
        store_alerts.save_alerts(session, [replace(saved, state="firing", severity="critical")])
    with sessions() as session:
        [listed] = store_alerts.list_alerts(session)
        open_now = store_alerts.open_alerts(session)
    assert listed.state == "firing" and listed.segment == {"model": "m2"}
    assert listed.opened_at == T0
    assert [a.id for a in open_now] == [saved.id]


def test_late_record_replaces_only_an_unscored_one(sessions: sessionmaker[Session]) -> None:
    """A record rebuilt from late spans replaces a pending one, never a scored one."""
    with sessions.begin() as session:
        repo.save_records(session, [make_record(1, chunks=0), make_record(2)])
    with sessions.begin() as session:
        [(scored_id, _)] = [c for c in repo.claim_pending(session, "w", 10, 60)]
        repo.save_evaluation(session, scored_id, Judgement(judge="j", status="ok"))
    late = [
        replace(make_record(n, chunks=2), answer="rebuilt", late=True, convention="openinference")
        for n in (1, 2)
    ]
    with sessions.begin() as session:
        assert repo.save_records(session, late) == 1
    with sessions() as session:
        stored = {s.record.trace_id: s for s in repo.list_records(session)}
    first, second = stored[f"{1:032x}"], stored[f"{2:032x}"]
    assert first.status == "pending" and first.record.answer == "rebuilt"
    assert len(first.record.chunks) == 2 and first.record.convention == "openinference"
    assert second.status == "scored" and second.record.answer != "rebuilt"
