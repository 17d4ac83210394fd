"""Worker jobs as plain functions, and their APScheduler wiring.

``score_pending`` leases pending records, judges them and stores the
evaluations; ``check_drift`` updates the per-segment detectors and the alerts.
Tests and ``faithmon worker --once`` call them directly; ``run`` schedules them.
"""

from __future__ import annotations

import logging
import os
import signal
import socket
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta

from apscheduler.schedulers.blocking import BlockingScheduler
from sqlalchemy.orm import Session, sessionmaker

from . import drift, sentinels
from .alerts import Policy as AlertPolicy
from .alerts import deliver, reconcile, to_tell
from .errors import RecordGone
from .model import Alert, AlertSink, Judge, Judgement, Outcome, RagRecord, Signal
from .store import metrics as store_metrics
from .store import repo, work
from .store import sampling as store_sampling
from .store import sentinels as store_sentinels
from .store import thresholds as store_thresholds

logger = logging.getLogger(__name__)

Sessions = sessionmaker[Session]

# Set on SIGTERM: scoring stops claiming, queued calls are not sent and their
# records are given back, and the calls in flight finish and are saved.
STOPPING = threading.Event()


def worker_id() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def _judge_safely(judge: Judge, question: str, chunks: Sequence[str], answer: str) -> Judgement:
    """A judge that raises yields a ``judge_error`` judgement with its cause, never a score."""
    started = time.perf_counter()
    try:
        return judge.judge(question, chunks, answer)
    except Exception as exc:
        logger.warning("faithmon: judge %s failed: %s", judge.name, type(exc).__name__)
        return Judgement(
            judge=judge.name,
            status="judge_error",
            error=f"{type(exc).__name__}: {exc}",
            latency_ms=(time.perf_counter() - started) * 1000,
        )


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


JUDGE_BLOCKED_RULE = "judge_blocked"


def _claim(
    sessions: Sessions,
    judge: Judge,
    owner: str,
    size: int,
    lease_seconds: int,
    daily_token_budget: int,
    now: datetime,
) -> tuple[list[tuple[int, RagRecord]], dict[int, tuple[int, datetime]], str | None]:
    """Lease up to ``size`` records, unless the judge is blocked or the budget is spent."""
    with sessions() as session, session.begin():
        blocked = work.judge_block(session, judge.name)
        if blocked:
            return [], {}, f"judge {judge.name} is blocked ({blocked})"
        if daily_token_budget:
            spent = work.tokens_today(session, now)
            if spent >= daily_token_budget:
                return [], {}, f"daily judge budget spent ({spent} tokens); paused until tomorrow"
        claimed = repo.claim_pending(session, owner, size, lease_seconds)
        history = repo.attempts_of(session, [i for i, _ in claimed]) if claimed else {}
    return claimed, history, None


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
    records are leased ahead (up to twice the concurrency, at most ``batch`` at a
    time) and each finished call is settled at once, so no call waits for a batch.
    A retryable judge failure puts the record back with a backoff; a permanent one,
    or one past the retry policy, is stored as ``judge_error`` with its cause. An
    authentication or billing failure blocks the judge configuration (an alert says
    so) and stops the queue until `faithmon judge unblock`. A spent daily budget
    pauses scoring.
    """
    owner = owner or worker_id()
    retry = retry or RetryPolicy()
    settled = 0
    refused = threading.Event()
    in_flight: dict[Future[Judgement | None], tuple[int, RagRecord]] = {}
    history: dict[int, tuple[int, datetime]] = {}
    exhausted = False

    def judge_one(record: RagRecord) -> Judgement | None:
        # Once the configuration is refused or the worker stops, what is still
        # queued is not sent (its record is given back).
        if refused.is_set() or STOPPING.is_set():
            return None
        judgement = _judge_safely(
            judge, record.question, [c.text for c in record.chunks], record.answer
        )
        if judgement.blocks_judge:
            refused.set()
        return judgement

    with ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="faithmon-judge") as pool:
        while True:
            stopping = refused.is_set() or STOPPING.is_set()
            if not exhausted and not stopping and len(in_flight) < concurrency:
                size = min(batch, 2 * concurrency - len(in_flight))
                claimed, more_history, reason = _claim(
                    sessions, judge, owner, size, lease_seconds, daily_token_budget, now()
                )
                if reason is not None:
                    logger.warning("faithmon: not scoring: %s", reason)
                exhausted = not claimed
                history.update(more_history)
                for record_id, record in claimed:
                    in_flight[pool.submit(judge_one, record)] = (record_id, record)
            if not in_flight:
                break
            finished, _ = wait(list(in_flight), return_when=FIRST_COMPLETED)
            done = [(in_flight.pop(f), f.result()) for f in finished]
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
    if settled:
        logger.info("faithmon: settled %d records with %s", settled, judge.name)
    return settled


def _settle(
    sessions: Sessions,
    judge: Judge,
    outcomes: Sequence[tuple[int, Judgement | None]],
    history: Mapping[int, tuple[int, datetime]],
    retry: RetryPolicy,
    sinks: Sequence[AlertSink],
    now: datetime,
    records: Mapping[int, RagRecord],
    dimensions: Sequence[str],
) -> list[tuple[int, Judgement]]:
    saved: list[tuple[int, Judgement]] = []
    blocking = next((j for _, j in outcomes if j is not None and j.blocks_judge), None)
    new_alerts: list[Alert] = []
    with sessions() as session, session.begin():
        for record_id, judgement in outcomes:
            if judgement is None:
                work.release(session, [record_id])
                continue
            work.add_usage(session, judge.name, judgement.usage, now)
            if blocking is not None and judgement.status == "judge_error":
                # The configuration is refused, not this record: give it back untouched.
                work.release(session, [record_id])
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
                work.defer(
                    session,
                    record_id,
                    attempts + 1,
                    now + timedelta(seconds=delay),
                    judgement.error or "retryable judge error",
                )
                continue
            record = records.get(record_id)
            try:
                inserted = work.settle(session, record_id, judgement)
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
                labels = record.labels if record is not None else {}
                store_metrics.count_evaluation(session, labels, dimensions, judgement)
            saved.append((record_id, judgement))
        if blocking is not None:
            new_alerts = _block(session, judge.name, blocking, now)
    deliver(sinks, new_alerts)
    return saved


def _block(session: Session, judge_name: str, refusal: Judgement, now: datetime) -> list[Alert]:
    """Block a judge configuration that was refused (auth, billing); its alert, once."""
    if not work.block_judge(session, judge_name, refusal.error or "refused"):
        return []
    logger.error("faithmon: judge %s blocked: %s", judge_name, refusal.error)
    return repo.save_alerts(
        session,
        [
            Alert(
                rule=JUDGE_BLOCKED_RULE,
                segment={"judge": judge_name},
                state="firing",
                severity="critical",
                opened_at=now,
                updated_at=now,
                details={"reason": refusal.error, "action": "faithmon judge unblock"},
            )
        ],
    )


@dataclass(frozen=True, slots=True)
class DriftRun:
    baseline_ready: bool
    readings: tuple[drift.Reading, ...]
    changed: tuple[Alert, ...]
    silent: tuple[drift.Silence, ...] = ()
    held_back: bool = False
    """The judge is not trusted (sentinels): its alerts wait."""


DRIFT_RULES = (drift.RULE, drift.CRITICAL_RULE, drift.NO_DATA_RULE)
_STREAM_OF_RULE: dict[str, drift.Stream] = {rule: stream for stream, rule in drift.RULES.items()}


def _baselines(
    session: Session,
    judge_name: str,
    outcomes: Sequence[Outcome],
    config: drift.DriftConfig,
    dry_run: bool,
) -> tuple[dict[str, drift.Baseline], datetime] | None:
    """The judge's frozen baselines and the end of their window; frozen now if the data allows."""
    stored = _stored_baselines(session, judge_name)
    if stored is not None:
        return stored
    window = drift.baseline_window(outcomes, config)
    if window is None:
        return None
    baselines = drift.compute_baselines(outcomes, window[1], config)
    if not dry_run:
        repo.save_baselines(
            session,
            judge_name,
            {
                k: (b.records, b.unsupported, b.critical, b.spread, b.critical_spread)
                for k, b in baselines.items()
            },
            window[0],
            window[1],
        )
        logger.info(
            "faithmon: drift baseline for %s frozen over %d records, %d segments",
            judge_name,
            baselines[""].records,
            len(baselines),
        )
    return baselines, window[1]


def _stored_baselines(
    session: Session, judge_name: str
) -> tuple[dict[str, drift.Baseline], datetime] | None:
    stored = repo.load_baselines(session, judge_name)
    if not stored:
        return None
    window_end = next(iter(stored.values()))[6]
    return {k: drift.Baseline(*row[:5]) for k, row in stored.items()}, window_end


def _restarts(
    session: Session, outcomes: Sequence[Outcome], config: drift.DriftConfig
) -> dict[str, datetime]:
    """Detector key → the trace time its CUSUM restarts from (see drift.restart_points)."""
    resets = []
    for alert in repo.resolved_alerts(session, list(drift.RULES.values())):
        reset = alert.details.get("reset_at")
        if reset:
            stream = _STREAM_OF_RULE[alert.rule]
            resets.append((stream, alert.segment, datetime.fromisoformat(reset)))
    return drift.restart_points(outcomes, resets, config.dimensions)


def _enrich(session: Session, judge_name: str, signals: Sequence[Signal]) -> list[Signal]:
    """Add what a team needs to act: chunk ids of the examples, sentinel status, judge."""
    sentinel = store_sentinels.status(session, judge_name)
    wanted = [
        e["trace_id"] for s in signals if s.level != "ok" for e in s.details.get("examples", ())
    ]
    found = repo.example_details(session, judge_name, wanted)
    enriched = []
    for item in signals:
        details = dict(item.details)
        details["judge"] = judge_name
        details["sentinel_status"] = sentinel
        if item.level != "ok" and details.get("examples"):
            details["examples"] = [
                {**e, **found.get(e["trace_id"], {})} for e in details["examples"]
            ]
        enriched.append(replace(item, details=details))
    return enriched


def check_drift(
    sessions: Sessions,
    judge_name: str,
    config: drift.DriftConfig,
    sinks: Sequence[AlertSink] = (),
    now: Callable[[], datetime] = lambda: datetime.now(UTC),
    dry_run: bool = False,
    policy: AlertPolicy | None = None,
) -> DriftRun:
    """Update every detector and the alerts; sinks hear of the changes the policy says to tell.

    With ``dry_run`` the readings are computed and nothing is written (the baseline
    is not frozen, no alert changes): what `faithmon drift status` shows.
    """
    policy = policy or AlertPolicy()
    clock = now()
    with sessions() as session, session.begin():
        trust = store_sentinels.trust_window(session, judge_name)
        held_back = trust is not None and trust[1] is None
        outcomes = repo.outcomes(session, judge_name)
        frozen = _baselines(session, judge_name, outcomes, config, dry_run)
        if frozen is None:
            return DriftRun(False, (), (), held_back=held_back)
        baselines, window_end = frozen
        if not config.calibrated and config.threshold is None:
            config = replace(config, calibrated=store_thresholds.load(session))
        readings = drift.detect(
            outcomes, baselines, window_end, config, since=_restarts(session, outcomes, config)
        )
        no_data, silent = drift.silences(outcomes, config, clock)
        if dry_run or held_back:
            if held_back and not dry_run:
                # The judge itself is drifting: production alerts wait for it to be trusted.
                logger.warning(
                    "faithmon: judge %s is not trusted; drift alerts held back", judge_name
                )
            return DriftRun(True, tuple(readings), (), tuple(silent), held_back=held_back)
        signals = _enrich(session, judge_name, [r.signal() for r in readings] + no_data)
        changed = repo.save_alerts(
            session,
            reconcile(
                [a for a in repo.open_alerts(session) if a.rule in DRIFT_RULES],
                signals,
                clock,
                policy,
                repo.resolved_alerts(session, DRIFT_RULES, since=clock - policy.cooldown),
            ),
        )
    deliver(sinks, to_tell(changed))
    return DriftRun(True, tuple(readings), tuple(changed), tuple(silent))


JUDGE_DRIFT_RULE = "judge_drift"
NEVER_TRUSTED = datetime(1970, 1, 1, tzinfo=UTC)


@dataclass(frozen=True, slots=True)
class SentinelRun:
    name: str
    version: str
    result: sentinels.RunResult
    drift: sentinels.JudgeDrift


def _judge_cases(
    judge: Judge, cases: Sequence[sentinels.Case], concurrency: int
) -> list[Judgement] | Judgement | None:
    """Every case judged, ``concurrency`` at a time. None when the worker is stopping,
    the refusal when the endpoint refuses the judge (a partial run would read as a
    judge that got worse, and more calls would only be refused again)."""
    refused = threading.Event()
    refusal: list[Judgement] = []

    def one(case: sentinels.Case) -> Judgement | None:
        if refused.is_set() or STOPPING.is_set():
            return None
        judgement = _judge_safely(judge, case.question, case.chunks, case.answer)
        if judgement.blocks_judge:
            refusal.append(judgement)
            refused.set()
        return judgement

    with ThreadPoolExecutor(max_workers=max(1, concurrency)) as pool:
        results = list(pool.map(one, cases))
    if refusal:
        return refusal[0]
    if STOPPING.is_set() or any(r is None for r in results):
        return None
    return [r for r in results if r is not None]


def run_sentinels(
    sessions: Sessions,
    judge: Judge,
    config: sentinels.JudgeDriftConfig | None = None,
    sinks: Sequence[AlertSink] = (),
    name: str | None = None,
    now: Callable[[], datetime] = lambda: datetime.now(UTC),
    concurrency: int = 4,
) -> list[SentinelRun]:
    """Run every sentinel set (or ``name``) through ``judge`` and check the judge for drift.

    When it drifts, its evaluations since its last good run stop counting for
    production drift, production alerts are held back, and a judge_drift alert says
    which way it moved; a good run later trusts it again and resolves the alert.
    """
    config = config or sentinels.JudgeDriftConfig()
    with sessions() as session, session.begin():
        if not store_sentinels.has_sets(session):
            starter = sentinels.starter_cases()
            store_sentinels.add_set(session, sentinels.STARTER, sentinels.version(starter), starter)
            logger.info("faithmon: loaded the starter sentinel set (%d cases)", len(starter))
        sets = store_sentinels.latest_sets(session, name)
    done = []
    for set_id, set_name, version, cases in sets:
        with sessions() as session:
            if work.judge_block(session, judge.name):
                logger.info("faithmon: judge %s is blocked: sentinels wait", judge.name)
                break
        judgements = _judge_cases(judge, cases, concurrency)
        if isinstance(judgements, Judgement):
            with sessions() as session, session.begin():
                blocked = _block(session, judge.name, judgements, now())
            deliver(sinks, blocked)
            break
        if judgements is None:
            logger.info("faithmon: stopping: sentinel run of %s abandoned", set_name)
            break
        result = sentinels.score_run(cases, judgements)
        when = now()
        with sessions() as session, session.begin():
            history = store_sentinels.runs(session, set_id, judge.name)
            reference = store_sentinels.reference_run(session, set_id, judge.name)
            series = [r for _, r, _ in history]
            if reference is not None and (not history or history[0][2] == "drift"):
                # A new judge configuration is measured against the trusted one it
                # replaces, so a configuration that is broken from its first run is caught.
                series.insert(0, reference[1])
            state = sentinels.judge_drift([*series, result], config)
            label = "drift" if state.drifting else "good"
            store_sentinels.add_run(
                session, set_id, judge.name, result, state.statistic, label, when
            )
            good = [at for at, _, s in history if s == "good"]
            segment = {"judge": judge.name, "sentinel": set_name}
            details = {
                "version": version,
                "direction": state.direction,
                "statistic": state.statistic,
                "tripwire": state.tripwire,
                **result.as_json(),
            }
            if reference is not None and series and series[0] is reference[1]:
                details["reference_judge"] = reference[0]
                details["reference_accuracy"] = round(reference[1].accuracy, 4)
                details["reference_false_flag_rate"] = round(reference[1].false_flag_rate, 4)
                details["reference_miss_rate"] = round(reference[1].miss_rate, 4)
            if state.drifting:
                store_sentinels.distrust(
                    session,
                    judge.name,
                    # Never good: nothing this configuration judged can be trusted.
                    good[-1] if good else NEVER_TRUSTED,
                    f"sentinel {set_name}: judge {state.direction}",
                )
            else:
                store_sentinels.trust_again(session, judge.name, when)
            signal = Signal(
                JUDGE_DRIFT_RULE, segment, "firing" if state.drifting else "ok", details
            )
            changed = repo.save_alerts(
                session, reconcile(repo.open_alerts(session, JUDGE_DRIFT_RULE), [signal], when)
            )
        deliver(sinks, to_tell(changed))
        done.append(SentinelRun(set_name, version, result, state))
    return done


def apply_retention(
    sessions: Sessions,
    days: int,
    dimensions: Sequence[str],
    judge_name: str,
    now: Callable[[], datetime] = lambda: datetime.now(UTC),
) -> int:
    """Delete records older than ``days`` (after rolling them into daily aggregates)."""
    if days <= 0:
        return 0
    cutoff = now() - timedelta(days=days)
    with sessions() as session, session.begin():
        deleted = store_sampling.apply_retention(session, cutoff, dimensions, judge_name)
    if deleted:
        logger.info("faithmon: retention deleted %d records older than %s", deleted, cutoff)
    return deleted


def run(
    jobs: Sequence[tuple[Callable[[], object], float]],
    scheduler: BlockingScheduler | None = None,
) -> None:
    """Run each (job, interval seconds) on its schedule until interrupted."""
    scheduler = scheduler or BlockingScheduler(timezone=UTC)

    def stop(signum: int, frame: object) -> None:
        # SIGTERM (docker stop, Kubernetes) ends the schedule; a scoring run in
        # progress saves the calls in flight and gives back what it had queued.
        logger.info("faithmon: worker stopping on signal %d", signum)
        STOPPING.set()
        scheduler.shutdown(wait=False)

    signal.signal(signal.SIGTERM, stop)
    for job, interval in jobs:
        scheduler.add_job(
            _logged(job),
            "interval",
            seconds=interval,
            max_instances=1,
            coalesce=True,
            next_run_time=datetime.now(UTC),
            name=getattr(job, "__name__", "job"),
        )
    scheduler.start()


def _logged(job: Callable[[], object]) -> Callable[[], None]:
    def wrapped() -> None:
        try:
            job()
        except Exception:
            # A database outage or a bug in one run must not stop the schedule.
            logger.exception("faithmon: job %s failed; it runs again on schedule", job)

    wrapped.__name__ = getattr(job, "__name__", "job")
    return wrapped


def calibrate_drift(
    sessions: Sessions, judge_name: str, config: drift.DriftConfig, since: datetime
) -> list[drift.Calibration] | None:
    """Per-detector thresholds from the history since ``since``; None without a baseline.

    Periods when a detector's alert was firing are left out of its history.
    """
    with sessions() as session:
        stored = _stored_baselines(session, judge_name)
        if stored is None:
            return None
        baselines = stored[0]
        outcomes = repo.outcomes(session, judge_name, since=since)
        excluded: dict[str, list[tuple[datetime, datetime]]] = {}
        for alert in repo.list_alerts(session):
            stream = _STREAM_OF_RULE.get(alert.rule)
            if stream is None:
                continue
            # Both ends in trace time, as the outcomes are: from the change point to
            # where the detector restarted (still open: to the end of the history).
            start, reset = alert.details.get("change_at"), alert.details.get("reset_at")
            begin = datetime.fromisoformat(start) if start else alert.opened_at
            end = datetime.fromisoformat(reset) if reset else datetime.max.replace(tzinfo=UTC)
            excluded.setdefault(drift.detector_key(stream, alert.segment), []).append((begin, end))
    # Traffic is measured over the span the history really covers.
    end = outcomes[-1].at if outcomes else datetime.now(UTC)
    first = outcomes[0].at if outcomes else since
    days = max((end - first).total_seconds() / 86400, 1 / 24)
    return drift.calibrate(outcomes, baselines, config, days, excluded)
