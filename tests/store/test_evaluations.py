"""Evaluations and the outcomes read from them, on SQLite and PostgreSQL."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from faithmon.model import Claim, Judgement
from faithmon.store import evaluations, records
from faithmon.store.tables import RecordRow
from tests.store.factory import make_record, stored_records


def test_evaluation_written_once_per_judge(sessions: sessionmaker[Session]) -> None:
    """A second evaluation by the same judge is ignored; the record becomes scored."""
    with sessions.begin() as session:
        records.save_records(session, [make_record(1)])
    with sessions.begin() as session:
        [(record_id, _)] = records.claim_pending(session, "w", 10, 60)
    judgement = Judgement(
        judge="offline/v1",
        status="ok",
        claims=(Claim("Order A17 shipped.", "supported", 0, "Order A17 shipped", True),),
    )
    with sessions.begin() as session:
        assert evaluations.save_evaluation(session, record_id, judgement)
    with sessions.begin() as session:
        assert not evaluations.save_evaluation(session, record_id, judgement)
    with sessions() as session:
        [stored] = stored_records(session)
        row = session.scalars(select(RecordRow)).one()
    assert stored.status == "scored"
    assert stored.evaluations == (judgement,)
    assert row.lease_owner is None


def test_judge_error_is_not_an_outcome(sessions: sessionmaker[Session]) -> None:
    """A judge_error evaluation settles the record but never reaches drift outcomes."""
    with sessions.begin() as session:
        records.save_records(session, [make_record(1), make_record(2)])
    with sessions.begin() as session:
        claimed = records.claim_pending(session, "w", 10, 60)
    bad = Judgement(judge="j", status="judge_error", error="TimeoutError: slow")
    good = Judgement(judge="j", status="ok", claims=(Claim("x", "unsupported"),))
    with sessions.begin() as session:
        evaluations.save_evaluation(session, claimed[0][0], bad)
        evaluations.save_evaluation(session, claimed[1][0], good)
    with sessions() as session:
        outcomes = evaluations.outcomes(session, "j")
        statuses = records.counts_by_status(session)
    assert [o.trace_id for o in outcomes] == [f"{2:032x}"]
    assert outcomes[0].unsupported and outcomes[0].unsupported_claims == ("x",)
    assert statuses == {"judge_error": 1, "scored": 1}
