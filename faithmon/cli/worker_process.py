"""The worker process wired to settings: its judge, sinks and jobs, with their intervals
(``faithmon.worker`` schedules them). ``worker_jobs`` builds the jobs; the demo runs the
same ones."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from .. import jobs, worker
from ..alerts.routing import Router
from ..config import Settings
from ..config_paths import make_room, make_room_for_database
from ..drift import DriftConfig
from ..jobs import health, notify, silences, violations
from ..jobs import review as review_jobs
from ..model import AlertSink, Judge, Judgement, RagRecord, segment_key
from ..store import Sessions
from ..store.locks import singleton, sqlite_worker_lock
from . import wiring
from ._common import counted
from .scrub_key import KeyCheck

logger = logging.getLogger(__name__)

NOTIFY_TICK = 5.0
"""Seconds between the notify job's looks at the outbox: well under the shortest sensible
group_wait, and one indexed query of a small table each."""


def healthy(settings: Settings) -> tuple[bool, str]:
    """Whether the heartbeat is fresh (written within three scheduling periods), and why."""
    path = settings.worker_heartbeat_file
    limit = 3 * max(settings.score_interval, 10.0)
    age = worker.heartbeat_age(path)
    if age is None:
        return False, f"no worker heartbeat in {path} (FAITHMON_WORKER_HEARTBEAT_FILE)"
    if age >= limit:
        return False, f"worker heartbeat in {path} is {age:.0f}s old (stale past {limit:.0f}s)"
    return True, f"worker healthy: heartbeat {age:.0f}s old in {path}"


def run_worker(settings: Settings, once: bool) -> dict[str, int]:
    """Run the jobs (once, or on their schedules); returns what ``--once`` did."""
    judge = wiring.make_judge(settings)
    config = wiring.drift_config(settings)
    sinks = wiring.make_sinks(settings)
    telemetry = None
    if settings.telemetry_endpoint:
        from ..alerts.telemetry import EvaluationTelemetry

        telemetry = EvaluationTelemetry(settings.telemetry_endpoint, settings.drift_dimensions)
    make_room_for_database(settings)  # the SQLite lock file goes beside the database
    try:
        with sqlite_worker_lock(settings.database_url), wiring.open_store(settings) as sessions:
            # The worker pseudonymises nothing itself, but a fleet with two keys is split
            # whichever process shows it: refused here before any job runs.
            KeyCheck(sessions, settings, "worker").check()
            return _run(settings, once, sessions, judge, config, sinks, telemetry)
    finally:
        if telemetry is not None:
            telemetry.shutdown()


@dataclass(frozen=True, slots=True)
class WorkerJobs:
    """The worker's jobs, configured from the settings. The worker runs them on their
    intervals (``schedule``), ``--once`` each once (``run_once``), and the demo in the
    order its story needs: all through :func:`worker_jobs`, so they do the same work."""

    judge: str
    """The name of the judge whose scores the jobs make and watch."""
    score: Callable[[], int]
    """Score the pending records; returns those settled."""
    review: Callable[[], int]
    """Queue a sample of the new evaluations for people; returns the items added."""
    detect: Callable[[], jobs.DriftRun | None]
    """Drift, the monitor's health, reviewer disagreement and policy violations, and the
    alerts a silence held back (None: another worker holds the drift job)."""
    retain: Callable[[], int]
    """Delete what is past the retention period; returns the records deleted."""
    sentinel: Callable[[], list[jobs.SentinelRun]]
    """Run the sentinel sets through the judge (none when turned off)."""
    send_groups: Callable[[], int]
    """Send the grouped routes' due alert groups; returns the messages sent."""
    heartbeat: Callable[[], None]
    grouping: bool
    """Whether a rules file's route groups its alerts (else ``send_groups`` has no work)."""

    def score_and_review(self) -> int:
        """The scheduled scoring job: people's queue follows each scoring run."""
        scored = self.score()
        self.review()
        return scored

    def schedule(self, settings: Settings) -> list[tuple[Callable[[], object], float]]:
        """Each job with its interval in seconds, for ``worker.run``; each says at INFO
        what it did (scoring, the queue and retention say it themselves)."""
        return [
            (_named(self.score_and_review, "score"), settings.score_interval),
            (_named(_told_drift(self.detect), "detect"), settings.drift_interval),
            (self.retain, settings.retention_interval),
            *(
                [(_named(_told_sentinels(self.sentinel), "sentinel"), settings.sentinel_interval)]
                if settings.sentinel_interval
                else []
            ),
            *(
                [(_named(_told_groups(self.send_groups), "notify"), NOTIFY_TICK)]
                if self.grouping
                else []
            ),
            (self.heartbeat, min(settings.score_interval, 10.0)),
        ]

    def run_once(self) -> dict[str, int]:
        """Each job once, in the order a fresh worker needs them; what each did."""
        runs = self.sentinel()
        scored = self.score_and_review()
        result = self.detect()
        deleted = self.retain()
        # A group still inside its group_wait stays in the outbox for the next run.
        messages = self.send_groups()
        return {
            "sentinel_runs": len(runs),
            "scored": scored,
            "alert_changes": len(result.changed) if result is not None else 0,
            "retention_deleted": deleted,
            "group_messages": messages,
        }


def _told_drift(detect: Callable[[], jobs.DriftRun | None]) -> Callable[[], object]:
    """The drift job, saying how many segments fire: at the first run, then whenever that
    or an alert changes (not once a minute while nothing does)."""
    said: list[tuple[bool, int]] = []

    def run() -> object:
        result = detect()
        if result is None:  # another worker holds the drift job
            return None
        firing = {segment_key(r.segment) for r in result.readings if r.signal().level == "firing"}
        now = (result.baseline_ready, len(firing))
        if result.changed or said != [now]:
            state = (
                f"{counted(len(firing), 'segment')} firing"
                if result.baseline_ready
                else "no frozen baseline yet"
            )
            logger.info(
                "faithmon: drift: %s; %s", state, counted(len(result.changed), "alert change")
            )
            said[:] = [now]
        return result

    return run


def _told_sentinels(sentinel: Callable[[], list[jobs.SentinelRun]]) -> Callable[[], object]:
    def run() -> object:
        runs = sentinel()
        for one in runs:
            logger.info(
                "faithmon: sentinel set %s %s: accuracy %.1f%% over %s%s",
                one.name,
                one.version,
                100 * one.result.accuracy,
                counted(one.result.cases, "case"),
                "; the judge is drifting" if one.drift.drifting else "",
            )
        return runs

    return run


def _told_groups(send: Callable[[], int]) -> Callable[[], object]:
    def run() -> object:
        sent = send()
        if sent:
            logger.info("faithmon: sent %s", counted(sent, "grouped notification"))
        return sent

    return run


def _named(job: Callable[[], object], name: str) -> Callable[[], object]:
    # The scheduler names a job (in its logs) by its __name__: the scoring job keeps "score".
    def run() -> object:
        return job()

    run.__name__ = name
    return run


def worker_jobs(
    settings: Settings,
    sessions: Sessions,
    judge: Judge,
    config: DriftConfig,
    sinks: Sequence[AlertSink],
    telemetry: Callable[[RagRecord, Judgement], None] | None = None,
) -> WorkerJobs:
    """The jobs the settings configure, on ``sessions`` with ``judge``, ``config`` and
    ``sinks``; each job that must run on one worker at a time takes its database lock."""
    retry = jobs.RetryPolicy(
        max_retries=settings.worker_max_retries,
        base_delay=settings.worker_retry_delay,
        max_age=settings.worker_retry_max_age,
    )
    policy = wiring.alert_policy(settings)
    floor = wiring.proof_floor(settings)
    bounds = wiring.health_bounds(settings)
    told = sinks
    # A running silence stops a notification; the alert still changes and is stored.
    sinks = silences.muting(sessions, sinks)
    # A rules file's grouped routes keep their alerts in the store's outbox until their
    # group is due; the notify job sends each group as one message.
    routers = [s for s in told if isinstance(s, Router) and s.grouping]
    for router in routers:
        router.queue_to(notify.outbox(sessions))
    silenced, on_muted = silences.silence_check(sessions)
    last_drift = [datetime.now(UTC) - timedelta(days=1)]
    queue_policy = wiring.review_policy(settings)
    ceiling = wiring.ceiling(settings)

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

    def review() -> int:
        with singleton(sessions, "review") as held:
            return review_jobs.fill_queue(sessions, judge.name, queue_policy) if held else 0

    def detect() -> jobs.DriftRun | None:
        with singleton(sessions, "drift") as held:
            if not held:
                return None
            run = jobs.check_drift(
                sessions, judge.name, config, sinks, policy=policy, floor=floor, ceiling=ceiling
            )
            # The monitor's own failures (judge errors, receivers not saving): their own kinds.
            health.check_health(sessions, judge.name, bounds, sinks, policy=policy)
            review_jobs.check_disagreement(
                sessions,
                judge.name,
                settings.review_min_kappa,
                settings.review_min_labels,
                sinks,
                policy=policy,
            )
            violations.check_policy(sessions, judge.name, config, sinks, policy=policy)
            now = datetime.now(UTC)
            silences.notify_after_silences(sessions, told, last_drift[0], now)
            last_drift[0] = now
            return run

    def retain() -> int:
        with singleton(sessions, "retention") as held:
            if not held:
                return 0
            return jobs.apply_retention(
                sessions, settings.retention_days, settings.drift_dimensions, judge.name
            )

    def sentinel() -> list[jobs.SentinelRun]:
        if not settings.sentinel_interval:
            return []  # turned off
        with singleton(sessions, "sentinels") as held:
            if not held:
                return []
            return jobs.run_sentinels(
                sessions, judge, sinks=sinks, concurrency=settings.judge_concurrency
            )

    def send_groups() -> int:
        if not routers:
            return 0
        with singleton(sessions, "notify") as held:
            if not held:
                return 0
            now = datetime.now(UTC)
            return sum(notify.flush(sessions, r, now, silenced, on_muted) for r in routers)

    def heartbeat() -> None:
        worker.beat(settings.worker_heartbeat_file)

    return WorkerJobs(
        judge.name,
        score,
        review,
        detect,
        retain,
        sentinel,
        send_groups,
        heartbeat,
        grouping=bool(routers),
    )


def _run(
    settings: Settings,
    once: bool,
    sessions: Sessions,
    judge: Judge,
    config: DriftConfig,
    sinks: Sequence[AlertSink],
    telemetry: Callable[[RagRecord, Judgement], None] | None,
) -> dict[str, int]:
    work = worker_jobs(settings, sessions, judge, config, sinks, telemetry)
    make_room(settings.worker_heartbeat_file)
    work.heartbeat()
    if once:
        return work.run_once()
    worker.run(work.schedule(settings))
    return {}
