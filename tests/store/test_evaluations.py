"""Evaluations and the outcomes read from them, on SQLite and PostgreSQL."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from faithmon.model import Claim, Judgement, Relevance
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


def test_relevance_round_trips(sessions: sessionmaker[Session]) -> None:
    """Relevance saved with a judgement reads back equal; a judgement without it reads None."""
    with sessions.begin() as session:
        records.save_records(session, [make_record(1), make_record(2)])
    with sessions.begin() as session:
        [(measured_id, _), (plain_id, _)] = records.claim_pending(session, "w", 10, 60)
    relevance = Relevance(
        context_relevance=0.25, answer_relevance=0.75, cause="retrieval", abstention=None
    )
    measured = Judgement(
        judge="j", status="ok", claims=(Claim("x", "unsupported"),), relevance=relevance
    )
    plain = Judgement(judge="j", status="ok", claims=(Claim("y", "supported"),))
    with sessions.begin() as session:
        evaluations.save_evaluation(session, measured_id, measured)
        evaluations.save_evaluation(session, plain_id, plain)
    with sessions() as session:
        stored = {r.record.trace_id: r.evaluations for r in stored_records(session)}
    assert stored[f"{1:032x}"] == (measured,)
    assert stored[f"{2:032x}"] == (plain,)
    assert stored[f"{2:032x}"][0].relevance is None
