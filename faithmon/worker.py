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
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from apscheduler.schedulers.blocking import BlockingScheduler
from sqlalchemy.orm import Session, sessionmaker

from . import drift
from .alerts import deliver, reconcile
from .model import Alert, AlertSink, Judge, Judgement
from .store import repo
from .store import sampling as store_sampling

logger = logging.getLogger(__name__)

Sessions = sessionmaker[Session]


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


def score_pending(
    sessions: Sessions,
    judge: Judge,
    *,
    batch: int = 100,
    lease_seconds: int = 300,
    owner: str | None = None,
    max_batches: int | None = None,
) -> int:
    """Score pending records batch by batch until none is left; returns records scored."""
    owner = owner or worker_id()
    scored = 0
    batches = 0
    while max_batches is None or batches < max_batches:
        with sessions() as session, session.begin():
            claimed = repo.claim_pending(session, owner, batch, lease_seconds)
        if not claimed:
            break
        batches += 1
        for record_id, record in claimed:
            judgement = _judge_safely(
                judge, record.question, [c.text for c in record.chunks], record.answer
            )
            with sessions() as session, session.begin():
                repo.save_evaluation(session, record_id, judgement)
            scored += 1
    if scored:
        logger.info("faithmon: scored %d records with %s", scored, judge.name)
    return scored


@dataclass(frozen=True, slots=True)
class DriftRun:
    baseline_ready: bool
    readings: tuple[drift.Reading, ...]
    changed: tuple[Alert, ...]


def check_drift(
    sessions: Sessions,
    judge_name: str,
    config: drift.DriftConfig,
    sinks: Sequence[AlertSink] = (),
    now: Callable[[], datetime] = lambda: datetime.now(UTC),
) -> DriftRun:
    """Update every segment's detector and the alerts; sinks get each change."""
    with sessions() as session, session.begin():
        outcomes = repo.outcomes(session, judge_name)
        stored = repo.load_baselines(session)
        if stored:
            window_end = next(iter(stored.values()))[3]
            baselines = {k: drift.Baseline(n, u) for k, (n, u, _, _) in stored.items()}
        else:
            window = drift.baseline_window(outcomes, config)
            if window is None:
                return DriftRun(False, (), ())
            window_end = window[1]
            baselines = drift.compute_baselines(outcomes, window_end, config)
            repo.save_baselines(
                session,
                {k: (b.records, b.unsupported) for k, b in baselines.items()},
                window[0],
                window_end,
            )
            logger.info(
                "faithmon: drift baseline frozen over %d records, %d segments",
                baselines[""].records,
                len(baselines),
            )
        readings = drift.detect(outcomes, baselines, window_end, config)
        signals = [r.signal(config.threshold) for r in readings]
        changed = repo.save_alerts(
            session, reconcile(repo.open_alerts(session, drift.RULE), signals, now())
        )
    deliver(sinks, [a for a in changed])
    return DriftRun(True, tuple(readings), tuple(changed))


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
        # SIGTERM (docker stop, Kubernetes) ends the schedule; a job that is
        # running finishes its current record, whose lease protects the rest.
        logger.info("faithmon: worker stopping on signal %d", signum)
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
