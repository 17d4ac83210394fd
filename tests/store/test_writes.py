"""One record the database refuses never blocks a batch: storable values, isolation, invalid."""

from __future__ import annotations

import math
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from faithmon.errors import StoreUnavailable
from faithmon.ingest.storable import storable
from faithmon.model import Chunk, RagRecord
from faithmon.store import engine as store_engine
from faithmon.store import records as store_records
from faithmon.store import writes
from faithmon.store.tables import RecordRow
from tests.store.factory import stored_records

NOW = datetime.now(UTC).replace(microsecond=0)
NUL = "\x00"


def make_record(n: int, **changes: object) -> RagRecord:
    record = RagRecord(
        trace_id=f"{n:032x}",
        question=f"question {n}",
        answer="Order A17 shipped on 3 March.",
        chunks=(Chunk(position=0, text="Order A17 shipped on 3 March.", id="doc-0", score=0.5),),
        labels={"route": "billing"},
        started_at=NOW - timedelta(minutes=n),
    )
    return replace(record, **changes)  # type: ignore[arg-type]


POISON = {
    "nul_in_question": {"question": f"where{NUL} is it"},
    "nul_in_label": {"labels": {"route": f"bill{NUL}ing"}},
    "nul_in_metadata_key": {
        "chunks": (Chunk(position=0, text="t", metadata={f"k{NUL}": f"v{NUL}"}),)
    },
    "nan_score": {"chunks": (Chunk(position=0, text="t", score=math.nan),)},
    "infinite_score": {"chunks": (Chunk(position=0, text="t", score=-math.inf),)},
    "nan_in_metadata": {"chunks": (Chunk(position=0, text="t", metadata={"s": [math.nan]}),)},
    "long_keep_reason": {"keep": "k" * 5000},
    "long_label": {"labels": {"route": "r" * 5000}},
    "lone_surrogate": {"answer": "bad \ud800 text"},
    "nan_generation": {"generation": {"temperature": math.inf}},
}


@pytest.mark.parametrize("poison", sorted(POISON))
def test_each_poison_value_is_made_storable(sessions: sessionmaker[Session], poison: str) -> None:
    """Every value a database refuses is repaired, listed in repairs, and the record stored."""
    record = storable(make_record(1, **POISON[poison]))
    assert record.repairs, "a repair is listed"
    assert all(NUL not in note and "\ud800" not in note for note in record.repairs)
    stats = writes.WriteStats()
    writes.save_records(sessions, [record, make_record(2)], stats)
    assert stats.invalid == 0
    with sessions() as session:
        listed = {s.record.trace_id: s.record for s in stored_records(session, limit=10)}
        rows = session.scalars(select(RecordRow)).all()
    assert len(rows) == 2
    row = next(r for r in rows if r.trace_id == record.trace_id)
    assert row.status == store_records.PENDING
    assert row.repairs == list(record.repairs)
    assert listed[record.trace_id].repairs == record.repairs


def test_storable_leaves_clean_records_alone() -> None:
    """A record with nothing to repair is returned as it is."""
    record = make_record(1)
    assert storable(record) is record


def test_storable_cuts_with_a_marker_and_nulls_non_finite_scores() -> None:
    """Cut values say how much was cut; a NaN score becomes null; NUL is removed."""
    record = storable(
        make_record(
            1,
            keep="k" * 500,
            question=f"a{NUL}b",
            chunks=(Chunk(position=0, text="t", score=math.nan),),
        )
    )
    assert record.keep is not None and len(record.keep) == 200
    assert record.keep.endswith("chars cut]")
    assert record.question == "ab"
    assert record.chunks[0].score is None
    assert any("chunks[0].score" in note for note in record.repairs)


@pytest.mark.postgres
def test_a_refused_record_is_isolated_and_stored_as_invalid(postgres_url: str) -> None:
    """On PostgreSQL a raw NUL fails the batch; the split stores the others and the bad one
    as invalid, with the reason and none of its content."""
    engine = store_engine.make_engine(postgres_url)
    store_engine.upgrade(engine)
    sessions = store_engine.session_factory(engine)
    bad = make_record(3, question=f"secret{NUL}text")  # not made storable on purpose
    batch = [make_record(n) for n in range(6)]
    batch[3] = bad
    stats = writes.WriteStats()
    writes.save_records(sessions, batch, stats)
    assert stats.invalid == 1
    with sessions() as session:
        rows = {r.trace_id: r for r in session.scalars(select(RecordRow))}
    assert len(rows) == 6
    invalid = rows[bad.trace_id]
    assert invalid.status == writes.INVALID
    assert invalid.question == "" and invalid.chunks == []
    assert invalid.last_error is not None and "DataError" in invalid.last_error
    assert all(rows[r.trace_id].status == store_records.PENDING for r in batch if r is not bad)
    engine.dispose()


def test_a_value_the_driver_cannot_encode_is_isolated(sessions: sessionmaker[Session]) -> None:
    """On SQLite too, a record that cannot be written is stored as invalid, the rest saved."""
    bad = make_record(1, chunks=(Chunk(position=0, text="t", metadata={"x": object()}),))
    stats = writes.WriteStats()
    writes.save_records(sessions, [make_record(0), bad, make_record(2)], stats)
    assert stats.invalid == 1
    with sessions() as session:
        statuses = {r.trace_id: r.status for r in session.scalars(select(RecordRow))}
    assert statuses == {
        make_record(0).trace_id: store_records.PENDING,
        bad.trace_id: writes.INVALID,
        make_record(2).trace_id: store_records.PENDING,
    }


def test_a_database_that_is_down_is_an_infrastructure_failure() -> None:
    """Connection failures raise StoreUnavailable and mark nothing invalid."""
    engine = store_engine.make_engine("postgresql+psycopg://postgres@127.0.0.1:9/nowhere")
    sessions = store_engine.session_factory(engine)
    stats = writes.WriteStats()
    with pytest.raises(StoreUnavailable):
        writes.save_records(sessions, [make_record(0), make_record(1)], stats)
    assert stats.invalid == 0 and stats.unstorable == []
    engine.dispose()


def test_saving_twice_adds_no_duplicate(sessions: sessionmaker[Session]) -> None:
    """A replayed record (the spool after a crash) leaves the stored one as it is."""
    stats = writes.WriteStats()
    writes.save_records(sessions, [make_record(0)], stats)
    writes.save_records(sessions, [make_record(0), make_record(1)], stats)
    with sessions() as session:
        assert len(session.scalars(select(RecordRow)).all()) == 2
