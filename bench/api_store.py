"""The API bench's store: records with a realistic label mix, each scored by one judge, their
chunks naming the documents they came from, a frozen baseline and a few alerts; seeded in
bulk (``save_records`` per batch of 2,000, evaluations as one core insert per batch).

The records of a store of N start one every 30 days / N, oldest first, so a store that
grows from 10,000 to 100,000 keeps its rate and gets 27 more days of history.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import Engine, func, insert, select, update

from faithmon import drift
from faithmon.model import Alert, Chunk, Claim, Judgement, RagRecord, Usage
from faithmon.store import alerts as store_alerts
from faithmon.store import baselines as store_baselines
from faithmon.store import engine as store_engine
from faithmon.store import evaluations as store_evaluations
from faithmon.store import records as store_records
from faithmon.store.tables import EvaluationRow, RecordRow

JUDGE = "offline/bench-api"
SPAN = timedelta(days=30)
BATCH = 2000
DOCUMENTS = 2000
CHUNKS = 5
# Drift freezes its baseline over the first day (the 10,000-record store spans 3 days).
CONFIG = drift.DriftConfig(dimensions=("route", "tenant"), baseline_days=1.0)

TENANTS = (("acme", 0.5), ("globex", 0.3), ("initech", 0.2))
ROUTES = (("search", 0.35), ("billing", 0.25), ("shipping", 0.2), ("returns", 0.12))
MODELS = (("gpt-4o-mini", 0.5), ("claude-3-haiku", 0.3), ("llama-3-70b", 0.2))
# Unsupported share of scored answers by model; billing drifts up over the last sixth.
UNSUPPORTED = {"gpt-4o-mini": 0.06, "claude-3-haiku": 0.065, "llama-3-70b": 0.12}
DRIFT_EXTRA = 0.1
CRITICAL_SHARE = 0.3
TWO_BAD = 0.3
PENDING_TAIL = 0.003
"""The newest records the worker has not reached yet."""
JUDGE_ERRORS = 0.01

_WORDS = (
    "order invoice refund parcel courier warehouse account password plan subscription "
    "payment card address delivery return label customer ticket agent policy period "
    "business days weeks months amount euros dollars discount coupon store region"
).split()
_SENTENCES = (
    "The {0} for the {1} is handled within {n} business days of the request.",
    "Customers on the {0} plan can change their {1} from the account page.",
    "A {0} sent to the {1} warehouse is checked within {n} hours.",
    "The {0} costs {n} euros and includes the {1}.",
    "Support agents escalate a {0} about the {1} after {n} days.",
)


def _pick(rng: random.Random, choices: Sequence[tuple[str, float]]) -> str:
    return rng.choices([c for c, _ in choices], [w for _, w in choices])[0]


def _sentence(rng: random.Random) -> str:
    template = rng.choice(_SENTENCES)
    return template.format(rng.choice(_WORDS), rng.choice(_WORDS), n=rng.randint(2, 90))


@dataclass(frozen=True, slots=True)
class Corpus:
    """The knowledge base: each route's documents and the text of every one (~450 chars)."""

    by_route: dict[str, tuple[str, ...]]
    text: dict[str, str]
    weights: tuple[float, ...]
    """Cumulative Zipf weights over a route's documents: a few answer most questions."""

    @classmethod
    def make(cls, rng: random.Random) -> Corpus:
        by_route: dict[str, tuple[str, ...]] = {}
        text: dict[str, str] = {}
        per_route = DOCUMENTS // len(ROUTES)
        for route, _ in ROUTES:
            ids = tuple(f"kb/{route}/{n:04d}" for n in range(per_route))
            by_route[route] = ids
            for doc_id in ids:
                text[doc_id] = " ".join(_sentence(rng) for _ in range(6))
        weights = tuple(itertools.accumulate(1 / (k + 1) for k in range(per_route)))
        return cls(by_route, text, weights)


@dataclass(frozen=True, slots=True)
class Made:
    record: RagRecord
    judgement: Judgement | None
    """None: still pending."""


def _judgement(rng: random.Random, unsupported: bool, chunks: int) -> Judgement:
    usage = Usage(calls=1, prompt_tokens=rng.randint(900, 2400), completion_tokens=120)
    latency = rng.uniform(400, 2500)
    if rng.random() < JUDGE_ERRORS:
        return Judgement(JUDGE, "judge_error", error="timeout", usage=usage, latency_ms=latency)
    claims = [
        Claim(_sentence(rng), "supported", chunk=c, quote="business days")
        for c in rng.sample(range(chunks), rng.randint(2, 3))
    ]
    # Most unsupported answers add one claim the chunks do not hold; some add two.
    for _ in range((rng.random() < TWO_BAD) + 1 if unsupported else 0):
        critical = rng.random() < CRITICAL_SHARE
        if rng.random() < 0.5:
            at = rng.randrange(chunks)
            claims.append(Claim(_sentence(rng), "contradicted", at, "within", critical))
        else:
            claims.append(Claim(_sentence(rng), "unsupported", critical=critical))
    return Judgement(JUDGE, "ok", tuple(claims), usage=usage, latency_ms=latency)


def make(n: int, total: int, start: datetime, corpus: Corpus) -> Made:
    """Record ``n`` of a store of ``total``: the same record whatever the batch it is in."""
    rng = random.Random(n)
    route = _pick(rng, ROUTES)
    model = _pick(rng, MODELS)
    labels = {"tenant": _pick(rng, TENANTS), "route": route, "model": model, "service": "rag"}
    ids = rng.choices(corpus.by_route[route], cum_weights=corpus.weights, k=CHUNKS)
    chunks = tuple(
        Chunk(i, corpus.text[d], id=d, score=round(0.9 - 0.1 * i, 2)) for i, d in enumerate(ids)
    )
    at = n / total
    rate = UNSUPPORTED[model] + (DRIFT_EXTRA if route == "billing" and at > 5 / 6 else 0.0)
    judgement = _judgement(rng, rng.random() < rate, CHUNKS) if at < 1 - PENDING_TAIL else None
    record = RagRecord(
        trace_id=f"{n:08x}{rng.getrandbits(96):024x}",
        question=f"How long does the {rng.choice(_WORDS)} for my {rng.choice(_WORDS)} take?",
        answer=" ".join(c.text for c in judgement.claims) if judgement else _sentence(rng),
        chunks=chunks,
        labels=labels,
        started_at=start + SPAN * at + timedelta(seconds=rng.uniform(0, 5)),
    )
    return Made(record, judgement)


def _evaluation_row(record_id: int, judgement: Judgement, at: datetime) -> dict[str, Any]:
    return {
        "record_id": record_id,
        "judge": judgement.judge,
        "status": judgement.status,
        "faithfulness": judgement.faithfulness,
        "lenient": judgement.lenient,
        "claims": [asdict(c) for c in judgement.claims],
        "error": judgement.error,
        "raw": None,
        "usage": asdict(judgement.usage),
        "latency_ms": judgement.latency_ms,
        "created_at": at,
    }


def _status(judgement: Judgement) -> str:
    return "judge_error" if judgement.status == "judge_error" else "scored"


def _batches(first: int, stop: int) -> Iterator[range]:
    for low in range(first, stop, BATCH):
        yield range(low, min(low + BATCH, stop))


class Store:
    """A bench database of ``total`` records over 30 days, seeded up to a size at a time."""

    def __init__(self, url: str, total: int, now: datetime | None = None) -> None:
        self.engine: Engine = store_engine.make_engine(url)
        store_engine.upgrade(self.engine)
        self.sessions = store_engine.session_factory(self.engine)
        self.total = total
        self.start = (now or datetime.now(UTC)) - SPAN
        self.corpus = Corpus.make(random.Random(0))
        self.size = 0
        self.trace_ids: list[str] = []
        self.flagged: list[str] = []
        """Unsupported billing answers of acme: the examples of its alert."""
        self.alerts_saved = False

    def grow(self, size: int) -> float:
        """Seed records up to ``size``; returns the seconds it took."""
        started = datetime.now(UTC)
        for batch in _batches(self.size, size):
            made = [make(n, self.total, self.start, self.corpus) for n in batch]
            with self.sessions.begin() as session:
                store_records.save_records(session, [m.record for m in made])
                found = session.execute(
                    select(RecordRow.trace_id, RecordRow.id).where(
                        RecordRow.trace_id.in_([m.record.trace_id for m in made])
                    )
                )
                ids = {trace_id: record_id for trace_id, record_id in found}
                judged = [(ids[m.record.trace_id], m.judgement) for m in made if m.judgement]
                if judged:
                    rows = [_evaluation_row(i, j, started) for i, j in judged]
                    session.execute(insert(EvaluationRow), rows)
                for status in ("scored", "judge_error"):
                    chosen = [i for i, j in judged if _status(j) == status]
                    session.execute(
                        update(RecordRow).where(RecordRow.id.in_(chosen)).values(status=status)
                    )
            self.trace_ids += [m.record.trace_id for m in made]
            self.flagged += [
                m.record.trace_id
                for m in made
                if m.judgement is not None
                and m.judgement.unsupported
                and m.record.labels["route"] == "billing"
                and m.record.labels["tenant"] == "acme"
            ]
        self.size = size
        if not self.alerts_saved:
            self._freeze_and_alert()
        if self.engine.dialect.name == "postgresql":
            # What autovacuum does after a bulk load; the bench should not depend on when.
            with self.engine.connect() as connection:
                connection.execution_options(isolation_level="AUTOCOMMIT")
                connection.exec_driver_sql("VACUUM ANALYZE")
        return (datetime.now(UTC) - started).total_seconds()

    def _freeze_and_alert(self) -> None:
        with self.sessions.begin() as session:
            frozen = drift.freeze(store_evaluations.outcomes(session, JUDGE), CONFIG)
            if frozen is not None:
                store_baselines.save_baselines(session, JUDGE, frozen)
            examples = [
                {"trace_id": t, "unsupported_claims": ["a claim"]} for t in self.flagged[-3:]
            ]
            now = self.start + SPAN * (self.size / self.total)
            alerts = [
                ("faithfulness_drift", {"route": "billing", "tenant": "acme"}, "firing"),
                ("critical_drift", {"tenant": "globex"}, "pending"),
                ("faithfulness_drift", {"route": "search", "tenant": "initech"}, "resolved"),
                ("judge_drift", {"judge": JUDGE, "sentinel": "starter"}, "firing"),
            ]
            store_alerts.save_alerts(
                session,
                [
                    Alert(
                        rule=rule,
                        segment=segment,
                        state=state,  # type: ignore[arg-type]
                        severity="critical" if state == "firing" else "warning",
                        opened_at=now,
                        updated_at=now,
                        resolved_at=now if state == "resolved" else None,
                        details={"current_rate": 0.2, "baseline_rate": 0.08, "examples": examples},
                    )
                    for rule, segment, state in alerts
                ],
            )
        self.alerts_saved = True

    def newest(self) -> datetime:
        with self.sessions() as session:
            found = session.scalar(select(func.max(RecordRow.started_at)))
        assert found is not None
        return found

    def close(self) -> None:
        self.engine.dispose()
