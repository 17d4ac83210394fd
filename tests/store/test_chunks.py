"""Chunk rows: written with their records, rewritten with a late rebuild, gone with
the record, and filled by migration 0016 from records stored before it, on SQLite and
PostgreSQL."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, timedelta
from typing import Any

import sqlalchemy as sa
from sqlalchemy import delete, select
from sqlalchemy.orm import Session, sessionmaker

from faithmon.model import Chunk, Judgement, RagRecord
from faithmon.store import engine as store_engine
from faithmon.store import evaluations, records, writes
from faithmon.store.tables import ChunkRow, RecordRow
from tests.timing import days_ago

Row = tuple[str, int, str | None, float | None, str | None]


def _rows(sessions: sessionmaker[Session]) -> set[Row]:
    with sessions() as session:
        found = session.execute(
            select(
                RecordRow.trace_id,
                ChunkRow.position,
                ChunkRow.doc_id,
                ChunkRow.score,
                ChunkRow.tenant,
            ).join(RecordRow, RecordRow.id == ChunkRow.record_id)
        ).all()
    return {tuple(row) for row in found}  # type: ignore[misc]


def _record(n: int, docs: tuple[str | None, ...], tenant: str = "acme") -> RagRecord:
    return RagRecord(
        trace_id=f"{n:032x}",
        question="q",
        answer="a",
        chunks=tuple(
            Chunk(i, f"text {i}", id=d, score=None if i == 1 else 0.5 + i)
            for i, d in enumerate(docs)
        ),
        labels={"tenant": tenant},
        started_at=days_ago(1),
    )


def test_saved_records_get_a_row_per_chunk(sessions: sessionmaker[Session]) -> None:
    """Each chunk gets a row by its position, with its document id (a repeated id
    twice, a missing one as NULL), score and the record's tenant; a record without
    chunks gets none, and saving the same trace again adds nothing."""
    made = [_record(1, ("a", "b", "a")), _record(2, (None,), tenant="beta"), _record(3, ())]
    stats = writes.WriteStats()
    writes.save_records(sessions, made, stats)
    writes.save_records(sessions, made[:1], stats)
    t1, t2 = f"{1:032x}", f"{2:032x}"
    assert _rows(sessions) == {
        (t1, 0, "a", 0.5, "acme"),
        (t1, 1, "b", None, "acme"),
        (t1, 2, "a", 2.5, "acme"),
        (t2, 0, None, 0.5, "beta"),
    }
    with sessions() as session:
        started = session.scalars(select(ChunkRow.started_at).distinct()).all()
    assert started == [made[0].started_at]


def test_a_late_rebuild_replaces_the_chunk_rows(sessions: sessionmaker[Session]) -> None:
    """A record rebuilt from late spans replaces its chunk rows while unscored; once it
    is scored the rebuild is refused and its rows stay."""
    stats = writes.WriteStats()
    writes.save_records(sessions, [_record(1, ("a", "b", "c")), _record(2, ("x",))], stats)
    rebuilt = replace(_record(1, ("d",), tenant="other"), late=True)
    writes.save_records(sessions, [rebuilt], stats)
    t1, t2 = f"{1:032x}", f"{2:032x}"
    assert _rows(sessions) == {(t1, 0, "d", 0.5, "other"), (t2, 0, "x", 0.5, "acme")}
    with sessions.begin() as session:
        for record_id, record in records.claim_pending(session, "test", 10, 60):
            if record.trace_id == t2:
                evaluations.save_evaluation(session, record_id, Judgement("j", "ok", ()))
    writes.save_records(sessions, [replace(_record(2, ("y", "z")), late=True)], stats)
    assert (t2, 0, "x", 0.5, "acme") in _rows(sessions)
    assert len(_rows(sessions)) == 2


def test_chunk_rows_go_with_their_record(sessions: sessionmaker[Session]) -> None:
    """Deleting a record deletes its chunk rows (the foreign key cascades)."""
    writes.save_records(sessions, [_record(1, ("a", "b")), _record(2, ("c",))], writes.WriteStats())
    with sessions.begin() as session:
        session.execute(delete(RecordRow).where(RecordRow.trace_id == f"{1:032x}"))
    assert _rows(sessions) == {(f"{2:032x}", 0, "c", 0.5, "acme")}


def test_the_migration_fills_chunk_rows_from_stored_records(empty_database_url: str) -> None:
    """Records stored before the chunk table existed get their rows, over several
    batches with gaps in the ids: positions from 0, ids as text (numbers too), scores
    only when they are numbers, as a save writes them."""
    engine = store_engine.make_engine(empty_database_url)
    try:
        store_engine.upgrade(engine, "0015")
        at = days_ago(1).replace(tzinfo=None)
        chunk_sets: list[list[dict[str, Any]]] = [
            [{"id": "a", "score": 0.9}, {"id": "b", "score": None}, {"id": "a", "score": 1}],
            [{"id": None}, {"text": "no id", "score": "high"}],
            [{"id": 7, "score": 0.25}],
            [],
        ]
        rows: list[dict[str, Any]] = [
            {
                "id": 1 + 2 * n,
                "t": f"{n:032x}",
                "at": at + timedelta(seconds=n),
                "chunks": json.dumps(chunk_sets[n % 4]),
                "tenant": "acme" if n % 3 else None,
            }
            for n in range(5003)
        ]
        with engine.begin() as connection:
            connection.execute(
                sa.text(
                    "INSERT INTO records (id, trace_id, started_at, ingested_at, question, "
                    "answer, chunks, labels, status, sample_reason, tenant) VALUES "
                    "(:id, :t, :at, :at, 'q', 'a', :chunks, '{}', 'scored', 'ratio', :tenant)"
                ),
                rows,
            )
        store_engine.upgrade(engine, "0016")
        sessions = store_engine.session_factory(engine)
        with sessions() as session:
            found = session.execute(
                select(
                    ChunkRow.record_id,
                    ChunkRow.position,
                    ChunkRow.doc_id,
                    ChunkRow.score,
                    ChunkRow.tenant,
                    ChunkRow.started_at,
                )
            ).all()
        expected = {
            (row["id"], position, doc, score, row["tenant"], row["at"].replace(tzinfo=UTC))
            for n, row in enumerate(rows)
            for position, (doc, score) in enumerate(
                (
                    (("a", 0.9), ("b", None), ("a", 1.0)),
                    ((None, None), (None, None)),
                    (("7", 0.25),),
                    (),
                )[n % 4]
            )
        }
        assert len(found) == len(expected) and set(map(tuple, found)) == expected
    finally:
        engine.dispose()
