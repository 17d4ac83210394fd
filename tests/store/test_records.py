"""Records and their leases on SQLite and PostgreSQL."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

from sqlalchemy.orm import Session, sessionmaker

from faithmon.model import Chunk, Judgement
from faithmon.store import evaluations, records
from faithmon.store.tables import RecordRow
from tests.store.factory import T0, make_record, stored_records


def test_save_records_is_idempotent(sessions: sessionmaker[Session]) -> None:
    """A trace id stored twice keeps one row; a record without chunks is no_context."""
    with sessions.begin() as session:
        assert records.save_records(session, [make_record(1), make_record(2, chunks=0)]) == 2
    with sessions.begin() as session:
        assert records.save_records(session, [make_record(1), make_record(3)]) == 1
    with sessions() as session:
        stored = {s.record.trace_id: s for s in stored_records(session)}
    assert len(stored) == 3
    assert stored[f"{2:032x}"].status == "no_context"
    first = stored[f"{1:032x}"]
    assert first.status == "pending"
    assert first.record.chunks[0] == Chunk(0, "chunk 0", "doc-0", 0.5, {"k": 0})
    assert first.record.started_at == T0 + timedelta(minutes=1)


def test_claims_are_disjoint_and_leases_expire(sessions: sessionmaker[Session]) -> None:
    """Two owners never lease the same record; an expired lease is claimed again."""
    with sessions.begin() as session:
        records.save_records(session, [make_record(n) for n in range(5)])
    with sessions.begin() as session:
        first = records.claim_pending(session, "w1", 3, lease_seconds=300)
    with sessions.begin() as session:
        second = records.claim_pending(session, "w2", 3, lease_seconds=300)
    ids_first = {i for i, _ in first}
    ids_second = {i for i, _ in second}
    assert len(ids_first) == 3 and len(ids_second) == 2
    assert not ids_first & ids_second
    with sessions.begin() as session:
        session.execute(
            RecordRow.__table__.update().values(lease_expires=datetime.now(UTC) - timedelta(1))
        )
    with sessions.begin() as session:
        again = records.claim_pending(session, "w3", 10, lease_seconds=300)
    assert {i for i, _ in again} == ids_first | ids_second


def test_late_record_replaces_only_an_unscored_one(sessions: sessionmaker[Session]) -> None:
    """A record rebuilt from late spans replaces a pending one, never a scored one."""
    with sessions.begin() as session:
        records.save_records(session, [make_record(1, chunks=0), make_record(2)])
    with sessions.begin() as session:
        [(scored_id, _)] = [c for c in records.claim_pending(session, "w", 10, 60)]
        evaluations.save_evaluation(session, scored_id, Judgement(judge="j", status="ok"))
    late = [
        replace(make_record(n, chunks=2), answer="rebuilt", late=True, convention="openinference")
        for n in (1, 2)
    ]
    with sessions.begin() as session:
        assert records.save_records(session, late) == 1
    with sessions() as session:
        stored = {s.record.trace_id: s for s in stored_records(session)}
    first, second = stored[f"{1:032x}"], stored[f"{2:032x}"]
    assert first.status == "pending" and first.record.answer == "rebuilt"
    assert len(first.record.chunks) == 2 and first.record.convention == "openinference"
    assert second.status == "scored" and second.record.answer != "rebuilt"
