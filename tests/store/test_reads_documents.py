"""Documents as the read API counts them, summed in SQL, against the records they come
from counted one by one in Python, on SQLite and PostgreSQL."""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import sqlalchemy as sa
from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from faithmon.model import Chunk, Claim, Judgement, RagRecord
from faithmon.store import engine as store_engine
from faithmon.store import evaluations, records, retention, writes
from faithmon.store.reads_documents import CitedClaim, DocumentUse, document_uses
from faithmon.store.tables import EvaluationRow, RecordDocumentRow, RecordRow
from tests.timing import days_ago

JUDGE = "offline/a"
OTHER = "offline/b"
T0 = days_ago(2)
# Where a contradicted claim may point: chunks, past the end, before the start, nowhere,
# not a whole number, far past any end.
POINTERS: tuple[Any, ...] = (0, 1, 2, 3, 9, -1, None, 1.5, 10**12)


def _claims(rng: random.Random, n: int) -> tuple[Claim, ...]:
    claims = [Claim(f"fine {n}", "supported", chunk=0, quote="x")]
    for k in range(rng.choice((0, 0, 1, 2, 3))):
        verdict = rng.choice(("contradicted", "contradicted", "unsupported"))
        at = rng.choice(POINTERS)
        claims.append(Claim(f"claim {n}.{k}", verdict, at, f"quote {k}", rng.random() < 0.3))
    return tuple(claims)


def _seed(sessions: sessionmaker[Session], count: int = 120) -> None:
    rng = random.Random(11)
    made = []
    for n in range(count):
        docs = [rng.choice((f"d{rng.randrange(8)}", None)) for _ in range(rng.randint(1, 4))]
        tenant = rng.choice(("acme", "globex", None))
        made.append(
            RagRecord(
                trace_id=f"{n:032x}",
                question="q",
                answer="a",
                chunks=tuple(Chunk(i, "text", id=d) for i, d in enumerate(docs)),
                labels={"tenant": tenant} if tenant else {},
                # Pairs share a start: the newest is then the larger id.
                started_at=T0 + timedelta(minutes=n // 2),
            )
        )
    with sessions.begin() as session:
        records.save_records(session, made)
    with sessions.begin() as session:
        for record_id, record in records.claim_pending(session, "test", count, 60):
            n = int(record.trace_id, 16)
            if n % 9 == 0:
                continue
            judgement = (
                Judgement(JUDGE, "judge_error", error="timeout")
                if n % 10 == 1
                else Judgement(JUDGE, "ok", _claims(rng, n))
            )
            evaluations.save_evaluation(session, record_id, judgement)
            if n % 4 == 0:
                evaluations.save_evaluation(
                    session, record_id, Judgement(OTHER, "ok", _claims(rng, n))
                )


@dataclass
class _Tally:
    last_passed: datetime
    passed: int = 0
    scored: int = 0
    unsupported: int = 0
    contradicted: int = 0
    examples: list[CitedClaim] = field(default_factory=list)


def _counted(
    session: Session,
    tenant: str | None,
    judge: str | None,
    since: datetime | None,
    until: datetime | None,
    examples: int,
) -> list[DocumentUse]:
    """What document_uses did before it summed in SQL: each record counted in Python."""
    shown: dict[int, EvaluationRow] = {}
    for row in session.scalars(select(EvaluationRow).order_by(EvaluationRow.id)):
        if judge is None or row.judge == judge:
            shown[row.record_id] = row
    rows = session.scalars(
        select(RecordRow).order_by(RecordRow.started_at.desc(), RecordRow.id.desc())
    )
    tally: dict[str, _Tally] = {}
    for row in rows:
        evaluation = shown.get(row.id)
        if (
            (judge is not None and evaluation is None)
            or (tenant is not None and row.tenant != tenant)
            or (since is not None and row.started_at < since)
            or (until is not None and row.started_at >= until)
        ):
            continue
        ids = [c.get("id") for c in row.chunks]
        score = evaluation.faithfulness if evaluation is not None else None
        for doc in dict.fromkeys(str(i) for i in ids if i is not None):
            counts = tally.setdefault(doc, _Tally(row.started_at))
            counts.passed += 1
            counts.scored += score is not None
            counts.unsupported += score is not None and score < 1
        claims = evaluation.claims if evaluation is not None and score is not None else []
        for claim in claims if score is not None and score < 1 else ():
            at = claim.get("chunk")
            if claim.get("verdict") != "contradicted" or not isinstance(at, int):
                continue
            if 0 <= at < len(ids) and ids[at] is not None:
                counts = tally[str(ids[at])]
                counts.contradicted += 1
                if len(counts.examples) < examples:
                    counts.examples.append(
                        CitedClaim(row.trace_id, claim["text"], claim["quote"], claim["critical"])
                    )
    return [
        DocumentUse(
            d, t.passed, t.scored, t.unsupported, t.contradicted, tuple(t.examples), t.last_passed
        )
        for d, t in tally.items()
    ]


@pytest.mark.parametrize(
    ("tenant", "judge", "window", "examples"),
    [
        (None, None, False, 3),
        (None, JUDGE, False, 3),
        (None, OTHER, False, 1),
        ("acme", None, True, 3),
        ("globex", JUDGE, True, 0),
    ],
)
def test_summed_documents_match_the_records_counted_one_by_one(
    sessions: sessionmaker[Session],
    tenant: str | None,
    judge: str | None,
    window: bool,
    examples: int,
) -> None:
    """Passes once per record, scores of the shown evaluation, contradicted claims only
    where they name a chunk with an id, the newest examples first: as counted by hand."""
    _seed(sessions)
    since, until = (
        (T0 + timedelta(minutes=10), T0 + timedelta(minutes=40)) if window else (None, None)
    )
    with sessions() as session:
        found = document_uses(session, tenant, judge, since, until, examples)
        expected = _counted(session, tenant, judge, since, until, examples)
    assert sorted(found, key=lambda d: d.doc_id) == sorted(expected, key=lambda d: d.doc_id)
    # The seed holds every case: the whole store has contradicted claims to count.
    assert window or any(d.contradicted and d.examples for d in expected)


def _passed(sessions: sessionmaker[Session]) -> dict[str, int]:
    with sessions() as session:
        return {d.doc_id: d.passed for d in document_uses(session)}


def test_ingested_documents_go_with_their_records(sessions: sessionmaker[Session]) -> None:
    """Records saved the way ingest saves them are counted, a late record rebuilt with
    other chunks counts those instead, and once retention deletes a record its document
    rows go with it."""
    old, kept = days_ago(40), days_ago(1)
    made = [
        RagRecord(
            trace_id=f"{n:032x}",
            question="q",
            answer="a",
            chunks=tuple(Chunk(i, "text", id=d) for i, d in enumerate(docs)),
            labels={"tenant": "acme"},
            started_at=at,
        )
        for n, (docs, at) in enumerate(
            ((("a", "b", "a", None), old), (("b",), old), (("b", "c"), kept), ((None,), kept))
        )
    ]
    stats = writes.WriteStats()
    writes.save_records(sessions, made[:2], stats, now=lambda: old)
    writes.save_records(sessions, made[2:], stats, now=lambda: kept)
    assert stats.invalid == 0 and _passed(sessions) == {"a": 1, "b": 3, "c": 1}
    rebuilt = replace(made[2], chunks=(Chunk(0, "text", id="d"),), late=True)
    writes.save_records(sessions, [rebuilt], stats)
    assert _passed(sessions) == {"a": 1, "b": 2, "d": 1}
    with sessions.begin() as session:
        for record_id, _ in records.claim_pending(session, "test", 10, 60):
            evaluations.save_evaluation(session, record_id, Judgement(JUDGE, "ok", ()))
    with sessions.begin() as session:
        assert retention.apply_retention(session, days_ago(30), ("tenant",), JUDGE) == 2
    assert _passed(sessions) == {"d": 1}
    with sessions() as session:
        assert session.scalars(select(RecordDocumentRow.doc_id)).all() == ["d"]


def test_the_migration_fills_document_rows_from_stored_chunks(empty_database_url: str) -> None:
    """Records stored before the document rows existed get theirs, in batches: a row per
    distinct chunk id (numbers as text), none for a chunk without one."""
    engine = store_engine.make_engine(empty_database_url)
    try:
        store_engine.upgrade(engine, "0014")
        at = days_ago(1).replace(tzinfo=None)
        chunk_sets: list[list[dict[str, Any]]] = [
            [{"id": "a"}, {"id": "b"}, {"id": "a"}],
            [{"id": None}, {"text": "no id"}],
            [{"id": 7}, {"id": "7"}],
            [],
        ]
        # More records than a batch, with gaps in their ids.
        rows = [
            {
                "id": 1 + 2 * n,
                "t": f"{n:032x}",
                "at": at + timedelta(seconds=n),
                "chunks": json.dumps(chunk_sets[n % 4]),
                "labels": json.dumps({"tenant": "acme"} if n % 3 else {}),
                "tenant": "acme" if n % 3 else None,
            }
            for n in range(5003)
        ]
        with engine.begin() as connection:
            connection.execute(
                sa.text(
                    "INSERT INTO records (id, trace_id, started_at, ingested_at, question, "
                    "answer, chunks, labels, status, sample_reason, tenant) VALUES "
                    "(:id, :t, :at, :at, 'q', 'a', :chunks, :labels, 'scored', 'ratio', :tenant)"
                ),
                rows,
            )
        store_engine.upgrade(engine)
        sessions = store_engine.session_factory(engine)
        with sessions() as session:
            found = session.execute(
                select(
                    RecordDocumentRow.record_id,
                    RecordDocumentRow.doc_id,
                    RecordDocumentRow.tenant,
                    RecordDocumentRow.started_at,
                )
            ).all()
            uses = {d.doc_id: d.passed for d in document_uses(session)}
        expected = {
            (row["id"], doc, row["tenant"], row["at"].replace(tzinfo=UTC))
            for n, row in enumerate(rows)
            for doc in (("a", "b"), (), ("7",), ())[n % 4]
        }
        assert len(found) == len(expected) and set(map(tuple, found)) == expected
        assert uses == {"a": 1251, "b": 1251, "7": 1251}
    finally:
        engine.dispose()
