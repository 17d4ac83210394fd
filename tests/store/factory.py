"""Shared store-test helpers: records for the store tests, and the review queue tests' records,
judge and policy."""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy.orm import Session, sessionmaker

from faithmon import drift
from faithmon.jobs import score_pending
from faithmon.judge import OfflineJudge
from faithmon.model import Chunk, Claim, Judgement, RagRecord, StoredRecord
from faithmon.review.queue import QueuePolicy
from faithmon.store import baselines, evaluations
from faithmon.store import records as store_records
from faithmon.store.reads_traces import TraceFilter, list_traces
from faithmon.store.stored_records import load_traces
from tests.timing import days_ago

T0 = days_ago(1, hour=12)


def stored_records(session: Session, limit: int = 100) -> list[StoredRecord]:
    """The newest stored records whole, as `faithmon traces list --json` reads them."""
    page = list_traces(session, TraceFilter(), limit)
    found = load_traces(session, [t.trace_id for t in page.items])
    return [found[t.trace_id] for t in page.items]


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


# The review queue tests' records start here.
REVIEW_T0 = days_ago(1)
CONTEXT = "Order A17 shipped on 3 March by courier."
JUDGE = OfflineJudge()
EVERYTHING = QueuePolicy(sample_rate=1.0, double_share=0.0)


def records(tenants: list[str | None], bad: bool = False) -> list[RagRecord]:
    answer = CONTEXT + (" It arrives tomorrow by drone." if bad else "")
    return [
        RagRecord(
            trace_id=f"{n + 1 + (500 if bad else 0):032x}",
            question="Where is order A17?",
            answer=answer,
            chunks=(Chunk(0, CONTEXT),),
            labels={"model": "m1", **({"tenant": t} if t else {})},
            started_at=REVIEW_T0 + timedelta(minutes=n),
        )
        for n, t in enumerate(tenants)
    ]


def scored(sessions: sessionmaker[Session], batch: list[RagRecord]) -> None:
    with sessions.begin() as session:
        store_records.save_records(session, batch)
    score_pending(sessions, JUDGE)


# Segments whose keys a naive ``k=v,k=v`` join would confuse (tests/*/test_segment_keys.py).
KEYS_JUDGE = "offline/keys"
KEYS_T0 = days_ago(2)
LOOKALIKE = {"route": "a,tenant=acme"}
"""One label whose value reads like two labels: ``PAIR``, written naively."""
PAIR = {"route": "a", "tenant": "acme"}
COMMA_TENANT = "acme, inc."
KEYS_CONFIG = drift.DriftConfig(
    dimensions=("route", "tenant"), baseline_records=30, baseline_days=0, segment_min_baseline=5
)


def seed_lookalikes(sessions: sessionmaker[Session]) -> None:
    """Scored records of the lookalike segment, of the pair, and of a tenant whose name
    holds a comma; baselines frozen over them."""
    made = []
    for n in range(30):
        labels = (LOOKALIKE, PAIR, {"route": "b", "tenant": COMMA_TENANT})[n % 3]
        made.append(
            RagRecord(
                trace_id=f"{n + 1:032x}",
                question="q",
                answer="a",
                chunks=(Chunk(0, "text"),),
                labels=labels,
                started_at=KEYS_T0 + timedelta(minutes=n),
            )
        )
    with sessions.begin() as session:
        store_records.save_records(session, made)
    with sessions.begin() as session:
        for record_id, record in store_records.claim_pending(session, "test", 30, 60):
            claims = [Claim("fine", "supported", chunk=0, quote="text")]
            if int(record.trace_id, 16) % 2:
                claims.append(Claim("made up", "unsupported"))
            evaluations.save_evaluation(
                session, record_id, Judgement(KEYS_JUDGE, "ok", tuple(claims))
            )
    with sessions.begin() as session:
        frozen = drift.freeze(evaluations.outcomes(session, KEYS_JUDGE), KEYS_CONFIG)
        assert frozen is not None
        baselines.save_baselines(session, KEYS_JUDGE, frozen)
