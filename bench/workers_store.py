"""The workers bench's database: pending records that each cost one judge call, and
the tally of evaluations, statuses and leases after a run."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from sqlalchemy import Engine, func, select
from sqlalchemy.orm import sessionmaker

from faithmon.model import Chunk, RagRecord
from faithmon.store import records as stored_records
from faithmon.store.tables import EvaluationRow, RecordRow

CONTEXT = "Order A17 shipped on 3 March by courier from the Lyon warehouse."
SEED_BATCH = 500


def records(count: int) -> list[RagRecord]:
    """``count`` records, each answer a sentence the chunk does not hold verbatim."""
    now = datetime.now(UTC)
    return [
        RagRecord(
            trace_id=uuid.uuid4().hex,
            question="Where is order A17?",
            answer=f"The parcel number {n} left us on 3 March.",
            chunks=(Chunk(0, CONTEXT),),
            labels={"route": "shipping"},
            started_at=now - timedelta(seconds=count - n),
        )
        for n in range(count)
    ]


def seed(engine: Engine, count: int) -> None:
    sessions = sessionmaker(engine)
    items = records(count)
    for start in range(0, count, SEED_BATCH):
        with sessions.begin() as session:
            stored_records.save_records(session, items[start : start + SEED_BATCH])


@dataclass(frozen=True, slots=True)
class Tally:
    evaluations: int
    distinct: int
    statuses: dict[str, int]
    leased: int


def tally(engine: Engine) -> Tally:
    with engine.connect() as connection:
        evaluations = connection.scalar(select(func.count()).select_from(EvaluationRow)) or 0
        distinct = connection.scalar(select(func.count(func.distinct(EvaluationRow.record_id))))
        statuses = {
            str(status): int(count)
            for status, count in connection.execute(
                select(RecordRow.status, func.count()).group_by(RecordRow.status)
            )
        }
        leased = connection.scalar(
            select(func.count()).select_from(RecordRow).where(RecordRow.lease_owner.is_not(None))
        )
    return Tally(int(evaluations), int(distinct or 0), statuses, int(leased or 0))
