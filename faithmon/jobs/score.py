"""The scoring job: lease pending records, judge them, store evaluations as calls finish."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from ..alerts import deliver
from ..errors import RecordGone
from ..judge.cascade import SettlesOffline
from ..judge.citations import Source, source_of
from ..judge.contracts import Checked, CheckedCascade, checked
from ..model import Alert, AlertSink, Chunk, Judge, Judgement, RagRecord
from ..store import Sessions, work
from ..store import alerts as store_alerts
from ..store import evaluations as store_evaluations
from ..store import metrics as store_metrics
from ..store import records as store_records
from ._shared import STOPPING, worker_id

logger = logging.getLogger(__name__)


def sources_of(record: RagRecord) -> list[Source]:
    return [source_of(c.position, c.text, c.id, c.metadata) for c in record.chunks]


def judge_safely(
    judge: Judge, question: str, chunks: Sequence[str] | Sequence[Chunk], answer: str
) -> Judgement:
    """A judge that raises yields a ``judge_error`` judgement with its cause, never a score.

    A checked judge given a record's chunks reads their ids, URLs and displayed numbers
    for its citations."""
    started = time.perf_counter()
    try:
        if isinstance(judge, Checked) and all(isinstance(c, Chunk) for c in chunks):
            return judge.judge_chunks(question, chunks, answer)  # type: ignore[arg-type]
        texts = [c.text if isinstance(c, Chunk) else c for c in chunks]
        return judge.judge(question, texts, answer)
    except Exception as exc:
        logger.warning("faithmon: judge %s failed: %s", judge.name, type(exc).__name__)
        return Judgement.raised(judge.name, exc, (time.perf_counter() - started) * 1000)


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """How a record whose judge call failed retryably is tried again."""

    max_retries: int = 5
    base_delay: float = 30.0
    max_delay: float = 3600.0
    max_age: float = 24 * 3600.0
    """Seconds after ingest past which a failing record is given up as judge_error."""

    def delay(self, attempt: int) -> float:
        return float(min(self.max_delay, self.base_delay * 2.0 ** max(0, attempt - 1)))


JUDGE_BLOCKED_RULE = "judge_error"
"""A judge configuration refused (auth, billing) and blocked: a judge failure, its own
kind, never counted as a faithfulness breach."""

LEAD_SECONDS = 1.0
"""How much work a worker leases ahead of its judge calls, in seconds at its recent pace:
a fast judge (offline, a cached cascade) then settles records a batch per transaction
instead of two, and a slow one still holds no more than twice its concurrency."""


@dataclass(slots=True)
class _Lease:
    claimed: list[tuple[int, RagRecord]]
    history: dict[int, tuple[int, datetime]]
    reason: str | None = None
    """Why nothing, or not everything, may be judged."""
    offline_only: bool = False
    """The budget is spent: only what the cascade settles without a call is scored."""


def _claim(
    sessions: Sessions,
    judge: Judge,
    owner: str,
    size: int,
    lease_seconds: int,
    daily_token_budget: int,
    now: datetime,
) -> _Lease:
    """Lease up to ``size`` records, unless the judge is blocked or the budget is spent.

    With the budget spent, a cascade still leases them: what its first stage settles
    needs no call.
    """
    offline_only = False
    reason = None
    with sessions() as session, session.begin():
        blocked = work.judge_block(session, judge.name)
        if blocked:
            return _Lease([], {}, f"judge {judge.name} is blocked ({blocked})")
        if daily_token_budget:
            spent = work.tokens_today(session, now)
            if spent >= daily_token_budget:
                reason = f"daily judge budget spent ({spent} tokens); paused until tomorrow"
                if not isinstance(judge, SettlesOffline):
                    return _Lease([], {}, reason)
                reason = (
                    f"daily judge budget spent ({spent} tokens): only traces the cascade's "
                    "first stage settles are scored; the rest wait until tomorrow"
                )
                offline_only = True
        claimed = store_records.claim_pending(session, owner, size, lease_seconds)
        history = store_records.attempts_of(session, [i for i, _ in claimed]) if claimed else {}
    return _Lease(claimed, history, reason, offline_only)


def score_pending(
    sessions: Sessions,
    judge: Judge,
    *,
    batch: int = 100,
    lease_seconds: int = 300,
    owner: str | None = None,
    concurrency: int = 1,
    retry: RetryPolicy | None = None,
    daily_token_budget: int = 0,
    sinks: Sequence[AlertSink] = (),
    now: Callable[[], datetime] = lambda: datetime.now(UTC),
    metric_dimensions: Sequence[str] = ("service", "route", "tenant", "model"),
    on_evaluation: Callable[[RagRecord, Judgement], None] | None = None,
) -> int:
    """Score pending records until none is left; returns records settled.

    Judge calls run concurrently up to ``concurrency`` and the queue is kept full:
    records are leased ahead (twice the concurrency, or about ``LEAD_SECONDS`` of work
    at the pace so far when that is more, at most ``batch`` at a time) and what has
    finished is settled at once, so no call waits for a batch.
    A retryable judge failure puts the record back with a backoff; a permanent one,
    or one past the retry policy, is stored as ``judge_error`` with its cause. An
    authentication or billing failure blocks the judge configuration (an alert says
    so) and stops the queue until `faithmon judge unblock`. A spent daily budget
    pauses scoring; a cascade judge then still scores the traces its first stage
    settles without a call, and the others stay pending until the next UTC day, never
    scored by the first stage alone.
    """
    owner = owner or worker_id()
    retry = retry or RetryPolicy()
    # Every score carries the contracts beside it (citations, quotes, severity, policy);
    # a judge built by the registry has them already, with the configured rules.
    judge = checked(judge)
    settled = 0
    refused = threading.Event()
    last_reason: str | None = None
    in_flight: dict[Future[Judgement | None], tuple[int, RagRecord]] = {}
    history: dict[int, tuple[int, datetime]] = {}
    exhausted = False
    offline_only: set[int] = set()
    waiting: list[int] = []
    waited = 0
    started = time.monotonic()

    def judge_one(record: RagRecord, without_calls: bool) -> Judgement | None:
        # Once the configuration is refused or the worker stops, what is still
        # queued is not sent (its record is given back).
        if refused.is_set() or STOPPING.is_set():
            return None
        if without_calls and isinstance(judge, CheckedCascade):
            # None: the trace needs the LLM stage, whose budget is spent; it waits.
            return judge.settle_sources(record.question, sources_of(record), record.answer)
        judgement = judge_safely(judge, record.question, record.chunks, record.answer)
        if judgement.blocks_judge:
            refused.set()
        return judgement

    with ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="faithmon-judge") as pool:
        while True:
            stopping = refused.is_set() or STOPPING.is_set()
            if not exhausted and not stopping and len(in_flight) < concurrency:
                pace = settled / max(time.monotonic() - started, 1e-3)
                ahead = max(2 * concurrency, int(pace * LEAD_SECONDS))
                size = min(batch, ahead - len(in_flight))
                lease = _claim(
                    sessions, judge, owner, size, lease_seconds, daily_token_budget, now()
                )
                if lease.reason is not None and lease.reason != last_reason:
                    logger.warning("faithmon: not scoring: %s", lease.reason)
                    last_reason = lease.reason
                exhausted = not lease.claimed
                history.update(lease.history)
                for record_id, record in lease.claimed:
                    if lease.offline_only:
                        offline_only.add(record_id)
                    try:
                        future = pool.submit(judge_one, record, lease.offline_only)
                    except RuntimeError:
                        # The process is going down (a stop signal came during the claim):
                        # the record is given back like one a stop left unsent, and no
                        # more are claimed, so no lease outlives the worker.
                        future = Future()
                        future.set_result(None)
                        exhausted = True
                    in_flight[future] = (record_id, record)
            if not in_flight:
                break
            finished, _ = wait(list(in_flight), return_when=FIRST_COMPLETED)
            done = []
            for future in finished:
                (record_id, record), result = in_flight.pop(future), future.result()
                if result is None and record_id in offline_only and not STOPPING.is_set():
                    waiting.append(record_id)
                    continue
                done.append(((record_id, record), result))
            if waiting:
                _wait_for_budget(sessions, waiting, history, now())
                waited += len(waiting)
                waiting.clear()
            outcomes = [(rid, judgement) for (rid, _), judgement in done]
            records = {rid: record for (rid, record), _ in done}
            saved = _settle(
                sessions, judge, outcomes, history, retry, sinks, now(), records, metric_dimensions
            )
            settled += len(saved)
            if on_evaluation is not None:
                for record_id, judgement in saved:
                    try:
                        on_evaluation(records[record_id], judgement)
                    except Exception as exc:  # telemetry never stops scoring
                        logger.warning(
                            "faithmon: evaluation telemetry failed (%s)", type(exc).__name__
                        )
    if waited:
        logger.info("faithmon: %d records wait for the judge budget (%s)", waited, judge.name)
    if settled:
        logger.info("faithmon: settled %d records with %s", settled, judge.name)
    return settled


def _wait_for_budget(
    sessions: Sessions,
    record_ids: Sequence[int],
    history: Mapping[int, tuple[int, datetime]],
    now: datetime,
) -> None:
    """Records that need the LLM while its budget is spent: pending until the next UTC day,
    when the budget starts afresh (no attempt is counted)."""
    tomorrow = (now.astimezone(UTC) + timedelta(days=1)).replace(
        hour=0, minute=0, second=0, microsecond=0
    )
    with sessions() as session, session.begin():
        for record_id in record_ids:
            attempts = history.get(record_id, (0, now))[0]
            store_records.defer(
                session, record_id, attempts, tomorrow, "waiting for the daily judge budget"
            )


def _settle(
    sessions: Sessions,
    judge: Judge,
    outcomes: Sequence[tuple[int, Judgement | None]],
    history: Mapping[int, tuple[int, datetime]],
    retry: RetryPolicy,
    sinks: Sequence[AlertSink],
    now: datetime,
    leased: Mapping[int, RagRecord],
    dimensions: Sequence[str],
) -> list[tuple[int, Judgement]]:
    saved: list[tuple[int, Judgement]] = []
    blocking = next((j for _, j in outcomes if j is not None and j.blocks_judge), None)
    new_alerts: list[Alert] = []
    counted: list[tuple[Mapping[str, str], Judgement]] = []
    with sessions() as session, session.begin():
        for record_id, judgement in outcomes:
            if judgement is None:
                store_records.release(session, [record_id])
                continue
            work.add_usage(session, judge.name, judgement.usage, now)
            if blocking is not None and judgement.status == "judge_error":
                # The configuration is refused, not this record: give it back untouched.
                store_records.release(session, [record_id])
                continue
            attempts, ingested_at = history.get(record_id, (0, now))
            age = (now - ingested_at).total_seconds()
            if (
                judgement.status == "judge_error"
                and judgement.retryable
                and attempts < retry.max_retries
                and age < retry.max_age
            ):
                delay = retry.delay(attempts + 1)
                store_records.defer(
                    session,
                    record_id,
                    attempts + 1,
                    now + timedelta(seconds=delay),
                    judgement.error or "retryable judge error",
                )
                continue
            record = leased.get(record_id)
            try:
                inserted = store_evaluations.settle(session, record_id, judgement)
            except RecordGone:
                # Deleted under the lease (by hand, or by retention after another
                # worker took over the expired lease and scored it): there is nothing
                # to attach the judgement to, but the rest of the batch is settled.
                logger.warning(
                    "faithmon: record %d (trace %s) was deleted while being judged; "
                    "its judgement is dropped",
                    record_id,
                    record.trace_id if record is not None else "?",
                )
                continue
            if inserted:
                counted.append((record.labels if record is not None else {}, judgement))
            saved.append((record_id, judgement))
        store_metrics.count_evaluations(session, counted, dimensions)
        # Blocked in the batch's transaction: its records are given back only with the
        # block in place, so no other worker leases them for the same refusal.
        if blocking is not None and work.block_judge(session, judge.name, block_reason(blocking)):
            new_alerts = store_alerts.save_alerts(
                session, [blocked_alert(judge.name, blocking, now)]
            )
    deliver(sinks, new_alerts)
    return saved


def block_reason(judgement: Judgement) -> str:
    """Why a judge configuration is blocked: the refusal's cause."""
    return judgement.error or "refused"


def blocked_alert(judge_name: str, refusal: Judgement, now: datetime) -> Alert:
    """The alert that a judge configuration was refused (auth, billing) and is now blocked;
    logged, since it stops scoring."""
    logger.error("faithmon: judge %s blocked: %s", judge_name, refusal.error)
    return Alert(
        rule=JUDGE_BLOCKED_RULE,
        segment={"judge": judge_name},
        state="firing",
        severity="critical",
        opened_at=now,
        updated_at=now,
        details={"cause": "blocked", "reason": refusal.error, "action": "faithmon judge unblock"},
    )
