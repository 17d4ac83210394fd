"""Shared job-test helpers: the drift tests' records, judge and configuration, and the
workers' records."""

from __future__ import annotations

from datetime import datetime, timedelta

from sqlalchemy.orm import Session, sessionmaker

from faithmon import drift
from faithmon.jobs import score_pending
from faithmon.judge import OfflineJudge
from faithmon.model import Chunk, RagRecord
from faithmon.store import records as store_records
from tests.timing import days_ago

T0 = days_ago(2)  # midnight, so the first records share an hour
CONTEXT = "Order A17 shipped on 3 March by courier."
BAD = CONTEXT + " It arrives tomorrow by drone."
JUDGE = OfflineJudge()


def record(
    n: int, answer: str, start: datetime = T0, reason: str = "sampled", **labels: str
) -> RagRecord:
    return RagRecord(
        trace_id=f"{n + 1:032x}",
        question="Where is order A17?",
        answer=answer,
        chunks=(Chunk(0, CONTEXT, id=f"doc-{n % 3}"),),
        labels=labels,
        started_at=start + timedelta(minutes=n),
        sample_reason=reason,
    )


def save_and_score(sessions: sessionmaker[Session], records: list[RagRecord]) -> None:
    with sessions.begin() as session:
        store_records.save_records(session, records)
    score_pending(sessions, JUDGE)


CONFIG = drift.DriftConfig(
    dimensions=("route", "model"),
    threshold=6.0,
    baseline_records=60,
    baseline_days=0,
    segment_min_baseline=10,
    recovery_records=60,
    no_data_hours=2,
    no_data_dimensions=("route",),
)


# Relative to today: the worker processes run retention on the real clock.
RECENT = days_ago(1)


def records(count: int) -> list[RagRecord]:
    return [
        RagRecord(
            trace_id=f"{n + 1:032x}",
            question="Where is order A17?",
            answer=f"The parcel number {n} left us on 3 March.",
            chunks=(Chunk(0, CONTEXT),),
            labels={"route": "shipping"},
            started_at=RECENT + timedelta(seconds=n),
        )
        for n in range(count)
    ]
