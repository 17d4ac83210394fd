"""The worker process: its jobs wired to settings, its locks and its heartbeat."""

from __future__ import annotations

import fcntl
import logging
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import IO

from sqlalchemy import Engine, make_url
from sqlalchemy.orm import Session, sessionmaker

from . import jobs, runtime, worker
from .config import Settings
from .drift import DriftConfig
from .errors import ConfigError
from .model import AlertSink, Judge, Judgement, RagRecord
from .store import work

logger = logging.getLogger(__name__)


@contextmanager
def sqlite_worker_lock(url: str) -> Iterator[None]:
    """On SQLite one worker is the supported set-up: a second one is refused at start."""
    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite" or not parsed.database:
        yield
        return
    path = Path(parsed.database + ".worker.lock")
    handle: IO[str] = path.open("a")
    try:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise ConfigError(
                f"another faithmon worker already runs on {parsed.database}; on SQLite one "
                "worker is the supported set-up (use PostgreSQL to run several)"
            ) from None
        yield
    finally:
        handle.close()


def beat(path: str) -> None:
    Path(path).write_text(f"{time.time():.3f}\n")


def healthy(settings: Settings) -> bool:
    """The heartbeat is fresh: written within three scheduling periods."""
    try:
        written = float(Path(settings.worker_heartbeat_file).read_text().strip())
    except (OSError, ValueError):
        return False
    return time.time() - written < 3 * max(settings.score_interval, 10.0)


def run_worker(settings: Settings, once: bool) -> str:
    """Run the jobs (once, or on their schedules); returns a summary for ``--once``."""
    judge = runtime.make_judge(settings)
    config = runtime.drift_config(settings)
    sinks = runtime.make_sinks(settings)
    retry = jobs.RetryPolicy(
        max_retries=settings.worker_max_retries,
        base_delay=settings.worker_retry_delay,
        max_age=settings.worker_retry_max_age,
    )
    telemetry = None
    if settings.telemetry_endpoint:
        from .alerts.telemetry import EvaluationTelemetry

        telemetry = EvaluationTelemetry(settings.telemetry_endpoint, settings.drift_dimensions)
    try:
        return _run(settings, once, judge, config, sinks, retry, telemetry)
    finally:
        if telemetry is not None:
            telemetry.shutdown()


def _run(
    settings: Settings,
    once: bool,
    judge: Judge,
    config: DriftConfig,
    sinks: Sequence[AlertSink],
    retry: jobs.RetryPolicy,
    telemetry: Callable[[RagRecord, Judgement], None] | None,
) -> str:
    with sqlite_worker_lock(settings.database_url), runtime.open_store(settings) as sessions:
        engine = _engine(sessions)

        def score() -> int:
            return jobs.score_pending(
                sessions,
                judge,
                batch=settings.worker_batch,
                lease_seconds=settings.lease_seconds,
                concurrency=settings.judge_concurrency,
                retry=retry,
                daily_token_budget=settings.judge_daily_budget,
                sinks=sinks,
                metric_dimensions=settings.drift_dimensions,
                on_evaluation=telemetry,
            )

        policy = runtime.alert_policy(settings)

        def detect() -> jobs.DriftRun | None:
            with work.singleton(engine, "drift") as held:
                return (
                    jobs.check_drift(sessions, judge.name, config, sinks, policy=policy)
                    if held
                    else None
                )

        def retain() -> int:
            with work.singleton(engine, "retention") as held:
                if not held:
                    return 0
                return jobs.apply_retention(
                    sessions, settings.retention_days, settings.drift_dimensions, judge.name
                )

        def sentinel() -> int:
            if not settings.sentinel_interval:
                return 0  # turned off
            with work.singleton(engine, "sentinels") as held:
                if not held:
                    return 0
                runs = jobs.run_sentinels(
                    sessions, judge, sinks=sinks, concurrency=settings.judge_concurrency
                )
                return len(runs)

        def heartbeat() -> None:
            beat(settings.worker_heartbeat_file)

        heartbeat()
        if once:
            sentinel()
            scored = score()
            result = detect()
            deleted = retain()
            changes = len(result.changed) if result is not None else 0
            return (
                f"scored {scored} records; {changes} alert changes; "
                f"retention deleted {deleted} records"
            )
        worker.run(
            [
                (score, settings.score_interval),
                (detect, settings.drift_interval),
                (retain, settings.retention_interval),
                *([(sentinel, settings.sentinel_interval)] if settings.sentinel_interval else []),
                (heartbeat, min(settings.score_interval, 10.0)),
            ]
        )
        return "stopped"


def _engine(sessions: sessionmaker[Session]) -> Engine:
    bind = sessions.kw["bind"]
    assert isinstance(bind, Engine)
    return bind
