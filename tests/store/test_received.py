"""A record keeps the time faithmon received it: retention counts from it, and a start the
app's clock puts far from it is clamped to it with a repair noted (saves, and migration
0027 for records stored before), on SQLite and PostgreSQL. Every clock is injected."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest
import sqlalchemy as sa
from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from faithmon.jobs import apply_retention
from faithmon.model import Chunk, RagRecord
from faithmon.store import engine as store_engine
from faithmon.store import records as store_records
from faithmon.store import writes
from faithmon.store.reads_traces import TraceFilter, list_traces
from faithmon.store.tables import ChunkRow, RecordDocumentRow, RecordRow
from tests.timing import days_ago

NOW = days_ago(1, hour=12)
FAR_AHEAD = datetime(2226, 3, 1, 12, tzinfo=UTC)
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def _record(n: int, started_at: datetime, chunks: int = 0) -> RagRecord:
    # No chunks by default: stored as no_context, which retention may delete unjudged.
    return RagRecord(
        trace_id=f"{n:032x}",
        question="Where is order A17?",
        answer="It shipped.",
        chunks=tuple(Chunk(i, "It shipped.", id=f"doc-{i}") for i in range(chunks)),
        labels={"route": "billing"},
        started_at=started_at,
    )


def _save(sessions: sessionmaker[Session], made: list[RagRecord], received: datetime) -> None:
    stats = writes.WriteStats()
    writes.save_records(sessions, made, stats, now=lambda: received)
    assert stats.invalid == 0


def _stored(sessions: sessionmaker[Session]) -> dict[str, tuple[datetime, datetime, list[str]]]:
    """trace id → (start, time received, repairs) as stored."""
    with sessions() as session:
        rows = session.execute(
            select(
                RecordRow.trace_id, RecordRow.started_at, RecordRow.ingested_at, RecordRow.repairs
            )
        )
        return {t: (started, received, list(r or ())) for t, started, received, r in rows}


def test_retention_counts_from_the_time_a_record_was_received(
    sessions: sessionmaker[Session],
) -> None:
    """With 30 days' retention, a record the app dates 40 days back but faithmon received
    today stays; one received 40 days ago goes."""
    dated_back = _record(1, NOW - timedelta(days=40))
    received_long_ago = _record(2, NOW - timedelta(days=40))
    _save(sessions, [dated_back], NOW)
    _save(sessions, [received_long_ago], NOW - timedelta(days=40))

    assert apply_retention(sessions, 30, ("route",), "judge", now=lambda: NOW) == 1

    stored = _stored(sessions)
    assert list(stored) == [dated_back.trace_id]
    assert stored[dated_back.trace_id] == (NOW - timedelta(days=40), NOW, [])


def test_a_start_far_ahead_is_clamped_with_a_repair_and_does_not_sort_first(
    sessions: sessionmaker[Session],
) -> None:
    """A trace dated 2226 is stored at the time received, says so in its repairs, and is
    listed after a trace received later, newest first; its chunk and document rows carry
    the clamped start too."""
    skewed = _record(1, FAR_AHEAD, chunks=1)
    later = _record(2, NOW + timedelta(minutes=30))
    _save(sessions, [skewed], NOW)
    _save(sessions, [later], NOW + timedelta(hours=1))

    with sessions() as session:
        page = list_traces(session, TraceFilter(), 10)
        copies = set(session.scalars(select(ChunkRow.started_at))) | set(
            session.scalars(select(RecordDocumentRow.started_at))
        )
    assert [t.trace_id for t in page.items] == [later.trace_id, skewed.trace_id]
    assert page.items[1].started_at == NOW and copies == {NOW}
    assert _stored(sessions)[skewed.trace_id] == (NOW, NOW, [store_records.START_AHEAD_REPAIR])


@pytest.mark.parametrize(
    ("started_at", "stored_start", "repair"),
    [
        pytest.param(EPOCH, NOW, store_records.START_BEHIND_REPAIR, id="1970"),
        pytest.param(NOW - timedelta(days=366), NOW, store_records.START_BEHIND_REPAIR, id="year"),
        pytest.param(NOW - timedelta(days=364), None, None, id="within-a-year"),
        pytest.param(NOW + timedelta(minutes=59), None, None, id="skew-within-an-hour"),
        pytest.param(NOW + timedelta(minutes=61), NOW, store_records.START_AHEAD_REPAIR, id="hour"),
    ],
)
@pytest.mark.one_backend
def test_only_a_start_past_the_limits_is_clamped(
    sessions: sessionmaker[Session],
    started_at: datetime,
    stored_start: datetime | None,
    repair: str | None,
) -> None:
    """A start more than an hour after its receipt or a year before it becomes the time
    received, noted after the repairs the record already had; one within is kept."""
    record = replace(_record(1, started_at), repairs=("question: 1 NUL removed",))
    _save(sessions, [record], NOW)
    repairs = ["question: 1 NUL removed", *([repair] if repair else [])]
    assert _stored(sessions)[record.trace_id] == (stored_start or started_at, NOW, repairs)


@pytest.mark.one_backend
def test_a_record_stored_as_invalid_is_clamped_too(sessions: sessionmaker[Session]) -> None:
    """A record the database refuses is stored as invalid with the same clamped start."""
    bad = replace(_record(1, FAR_AHEAD), chunks=(Chunk(0, "t", metadata={"x": object()}),))
    stats = writes.WriteStats()
    writes.save_records(sessions, [bad], stats, now=lambda: NOW)
    assert stats.invalid == 1
    assert _stored(sessions)[bad.trace_id] == (NOW, NOW, [store_records.START_AHEAD_REPAIR])


@pytest.mark.one_backend
def test_a_late_rebuild_keeps_the_time_first_received(sessions: sessionmaker[Session]) -> None:
    """Late spans replace an unscored record but not when it was received, so they cannot
    restart (or shorten) its retention."""
    first = _record(1, NOW - timedelta(minutes=5))
    _save(sessions, [first], NOW)
    rebuilt = replace(first, answer="It shipped on 3 March.", late=True)
    _save(sessions, [rebuilt], NOW + timedelta(minutes=2))
    assert _stored(sessions)[first.trace_id][1] == NOW


def test_the_migration_clamps_far_starts_of_stored_records(empty_database_url: str) -> None:
    """Records stored before 0027 get the rule a save applies now: a far start becomes the
    time received, in the record, its chunk rows and its document rows, with the repair
    noted after those it had (none, JSON null or a list); other records are left alone."""
    received = NOW.replace(tzinfo=None)
    rows = [
        # trace, start, repairs as stored
        ("a" * 32, FAR_AHEAD.replace(tzinfo=None), None),
        ("b" * 32, EPOCH.replace(tzinfo=None), json.dumps(["labels key: cut"])),
        ("c" * 32, received - timedelta(days=40), json.dumps(None)),
        ("d" * 32, received + timedelta(minutes=30), None),
    ]
    engine = store_engine.make_engine(empty_database_url)
    try:
        store_engine.upgrade(engine, "0026")
        with engine.begin() as connection:
            for n, (trace, start, repairs) in enumerate(rows, 1):
                connection.execute(
                    sa.text(
                        "INSERT INTO records (id, trace_id, started_at, ingested_at, question, "
                        "answer, chunks, labels, status, sample_reason, repairs) VALUES (:id, "
                        ":t, :start, :received, 'q', 'a', '[]', '{}', 'scored', 'ratio', :r)"
                    ),
                    {"id": n, "t": trace, "start": start, "received": received, "r": repairs},
                )
                connection.execute(
                    sa.text(
                        "INSERT INTO chunks (record_id, position, doc_id, started_at) "
                        "VALUES (:id, 0, 'doc', :start)"
                    ),
                    {"id": n, "start": start},
                )
                connection.execute(
                    sa.text(
                        "INSERT INTO record_documents (record_id, doc_id, started_at) "
                        "VALUES (:id, 'doc', :start)"
                    ),
                    {"id": n, "start": start},
                )
        store_engine.upgrade(engine)
        sessions = store_engine.session_factory(engine)
        with sessions() as session:
            chunks = dict(session.execute(select(ChunkRow.record_id, ChunkRow.started_at)).all())
            documents = dict(
                session.execute(
                    select(RecordDocumentRow.record_id, RecordDocumentRow.started_at)
                ).all()
            )
        stored = _stored(sessions)
    finally:
        engine.dispose()
    kept_c, kept_d = NOW - timedelta(days=40), NOW + timedelta(minutes=30)
    assert stored == {
        "a" * 32: (NOW, NOW, [store_records.START_AHEAD_REPAIR]),
        "b" * 32: (NOW, NOW, ["labels key: cut", store_records.START_BEHIND_REPAIR]),
        "c" * 32: (kept_c, NOW, []),
        "d" * 32: (kept_d, NOW, []),
    }
    assert chunks == documents == {1: NOW, 2: NOW, 3: kept_c, 4: kept_d}
