"""Claim rows: one per evaluation and claim index, written with the evaluation, gone with it,
and filled by migration 0018 from evaluations stored before it, on SQLite and PostgreSQL."""

from __future__ import annotations

import json
from dataclasses import asdict
from datetime import timedelta
from typing import Any

import sqlalchemy as sa
from sqlalchemy import delete, select
from sqlalchemy.orm import Session, sessionmaker

from faithmon.model import Chunk, Claim, Judgement, RagRecord
from faithmon.store import engine as store_engine
from faithmon.store import evaluations as store_evaluations
from faithmon.store import records as store_records
from faithmon.store.tables import ClaimRow, EvaluationRow, RecordRow
from tests.timing import days_ago

CLAIMS = (
    Claim("Order A17 shipped.", "supported", chunk=0, quote="shipped", confidence=0.97),
    Claim("It arrives tomorrow.", "unsupported", critical=True, stage="llm"),
    Claim("It was cancelled.", "contradicted", chunk=1, critical=True, stage="offline"),
    Claim("A judge cited a number that is no chunk.", "unsupported", chunk=10**12),
)
EXPECTED = [
    (0, "supported", 0, False, None, 0.97),
    (1, "unsupported", None, True, "llm", None),
    (2, "contradicted", 1, True, "offline", None),
    (3, "unsupported", None, False, None, None),
]


def _rows(session: Session) -> list[tuple[Any, ...]]:
    query = select(
        ClaimRow.position,
        ClaimRow.verdict,
        ClaimRow.chunk,
        ClaimRow.critical,
        ClaimRow.stage,
        ClaimRow.confidence,
    ).order_by(ClaimRow.evaluation_id, ClaimRow.position)
    return [tuple(row) for row in session.execute(query)]


def _save(sessions: sessionmaker[Session]) -> int:
    record = RagRecord(
        trace_id=f"{1:032x}",
        question="Where is order A17?",
        answer="It shipped.",
        chunks=(Chunk(0, "Order A17 shipped."), Chunk(1, "Order A17 was not cancelled.")),
        labels={},
        started_at=days_ago(1),
    )
    with sessions.begin() as session:
        store_records.save_records(session, [record])
        record_id = session.scalar(select(RecordRow.id))
        assert record_id is not None
        store_evaluations.save_evaluation(session, record_id, Judgement("judge/a", "ok", CLAIMS))
    return record_id


def test_an_evaluation_writes_a_row_per_claim(sessions: sessionmaker[Session]) -> None:
    """Index, verdict, cited chunk (only a possible position), criticality, stage and
    confidence, as the evaluation's claims hold them; saving it again writes nothing."""
    record_id = _save(sessions)
    with sessions.begin() as session:
        again = store_evaluations.save_evaluation(
            session, record_id, Judgement("judge/a", "ok", CLAIMS)
        )
        assert not again
        assert _rows(session) == EXPECTED


def test_claim_rows_go_with_their_evaluation(sessions: sessionmaker[Session]) -> None:
    """Deleting the evaluation (retention does, with its record) deletes its claim rows."""
    _save(sessions)
    with sessions.begin() as session:
        session.execute(delete(EvaluationRow))
    with sessions() as session:
        assert _rows(session) == []


def test_the_migration_fills_claim_rows_from_stored_evaluations(empty_database_url: str) -> None:
    """Evaluations stored before the claim table existed get their rows, over several
    batches: the same rows a save writes."""
    engine = store_engine.make_engine(empty_database_url)
    try:
        store_engine.upgrade(engine, "0017")
        at = days_ago(1).replace(tzinfo=None)
        claims = json.dumps([asdict(c) for c in CLAIMS])
        count = 5003
        with engine.begin() as connection:
            connection.execute(
                sa.text(
                    "INSERT INTO records (id, trace_id, started_at, ingested_at, question, "
                    "answer, chunks, labels, status, sample_reason) VALUES "
                    "(:id, :t, :at, :at, 'q', 'a', '[]', '{}', 'scored', 'sampled')"
                ),
                [
                    {"id": n + 1, "t": f"{n:032x}", "at": at + timedelta(seconds=n)}
                    for n in range(count)
                ],
            )
            connection.execute(
                sa.text(
                    "INSERT INTO evaluations (id, record_id, judge, status, faithfulness, "
                    "lenient, claims, usage, latency_ms, created_at) VALUES "
                    "(:id, :id, 'judge/a', 'ok', 0.25, 0.5, :claims, '{}', 1.0, :at)"
                ),
                [
                    {"id": n + 1, "claims": claims if n % 2 else "[]", "at": at}
                    for n in range(count)
                ],
            )
        store_engine.upgrade(engine)
        sessions = store_engine.session_factory(engine)
        with sessions() as session:
            found = _rows(session)
            owners = set(session.scalars(select(ClaimRow.evaluation_id).distinct()))
        assert found == EXPECTED * (count // 2)
        assert owners == {n + 1 for n in range(count) if n % 2}
    finally:
        engine.dispose()
