"""The wiring: settings in, parts out (the CLI's commands and the demo build every part here)."""

from __future__ import annotations

import functools
import ipaddress
import logging
import os
from collections.abc import Callable, Collection, Iterator, Sequence
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import drift
from ..alerts import Policy as AlertPolicy
from ..alerts.routing import sinks_from_settings
from ..alerts.rules import load as load_rules
from ..alerts.sinks import SinkOptions
from ..config import Settings, part_config
from ..config_paths import make_room, make_room_for_database
from ..errors import ConfigError, StoreUnavailable
from ..ingest.pipeline import Pipeline
from ..ingest.sampler import PolicySampler, SamplingPolicy
from ..ingest.spool import Spool
from ..ingest.workers import pii_scrubber
from ..jobs.health import HealthBounds
from ..judge import JudgeOptions
from ..judge import make_judge as build_judge
from ..model import (
    AlertSink,
    ApiKey,
    DroppedTrace,
    Feedback,
    Judge,
    RagRecord,
    SamplingTally,
    SaveFeedbackFn,
    SaveFn,
    SaveSamplingFn,
    Scrubber,
)
from ..model.standing import ProofFloor
from ..review.queue import QueuePolicy
from ..store import Sessions, writes
from ..store import engine as store_engine
from ..store import keys as store_keys
from ..store import opening as store_opening
from ..store import records as stored_records
from .scrub_key import KeyCheck, scrub_key

if TYPE_CHECKING:
    from ..api.app import Auth

logger = logging.getLogger(__name__)


@contextmanager
def open_store(
    settings: Settings, upgrade: bool = True, must_exist: bool = False
) -> Iterator[Sessions]:
    """Sessions on an upgraded schema; the engine's connections close on exit.

    A command that reads or changes what is stored (``must_exist``) refuses a database
    that does not exist rather than creating an empty one and printing nothing.
    """
    if not must_exist:
        make_room_for_database(settings)
    engine = store_opening.open_engine(
        settings.database_url,
        must_exist=must_exist,
        connect_timeout=settings.db_connect_timeout,
        statement_timeout=settings.db_statement_timeout,
    )
    try:
        if upgrade:
            store_engine.upgrade(engine)
        yield store_engine.session_factory(engine)
    finally:
        engine.dispose()


@contextmanager
def open_receiver_store(settings: Settings) -> Iterator[tuple[Sessions, Callable[[], None]]]:
    """The receiver's sessions, and what to call before each write. A URL or driver it
    cannot use fails at once; a database that does not answer yet only delays the schema
    and scrub key checks (and every write) until it answers; another scrub key than the
    one the store recorded refuses the start (ScrubKeyMismatch), or every write when it
    is found only then."""
    make_room_for_database(settings)
    engine = store_opening.open_engine(
        settings.database_url,
        connect_timeout=settings.db_connect_timeout,
        statement_timeout=settings.db_statement_timeout,
        connect=False,
    )
    schema = store_opening.DeferredSchema(engine)
    sessions = store_engine.session_factory(engine)
    try:
        key = KeyCheck(sessions, settings, "serve")

        def before_write() -> None:
            schema.ensure()
            key()

        try:
            schema.ensure()
            key.check()
        except StoreUnavailable as exc:
            logger.warning(
                "faithmon: the database does not answer (%s); receiving into the spool "
                "until it does",
                exc,
            )
        yield sessions, before_write
    finally:
        engine.dispose()


def make_save(sessions: Sessions) -> SaveFn:
    """Saves records; a record the database refuses is stored as invalid, the rest saved."""
    stats = writes.WriteStats()

    def save(records: Sequence[RagRecord]) -> None:
        writes.save_records(sessions, records, stats)

    return save


def make_save_feedback(sessions: Sessions) -> SaveFeedbackFn:
    def save(items: Sequence[Feedback]) -> None:
        writes.save_feedback(sessions, items)

    return save


def make_save_sampling(sessions: Sessions) -> SaveSamplingFn:
    def save(tallies: Sequence[SamplingTally], dropped: Sequence[DroppedTrace]) -> None:
        writes.save_sampling(sessions, tallies, dropped)

    return save


def make_stored(sessions: Sessions) -> Callable[[Collection[str]], set[str]]:
    """Which of some trace ids the store already holds (a spool replay skips them)."""

    def stored(trace_ids: Collection[str]) -> set[str]:
        with sessions() as session:
            return stored_records.stored_trace_ids(session, trace_ids)

    return stored


def open_spool(settings: Settings) -> Spool | None:
    """The receiver's durable spool, or None when FAITHMON_SPOOL_DIR is empty."""
    if not settings.spool_dir:
        return None
    make_room(settings.spool_dir)
    return Spool(settings.spool_dir, settings.spool_max_mb * 1024 * 1024)


def scrubber_factory(settings: Settings) -> Callable[[], Scrubber]:
    """What builds the PII scrubber the settings describe: the pipeline thread's and each
    ingest worker process's alike, so a scrubbing setting cannot reach one and not the
    other. Picklable (a worker process calls it): the key is resolved here, once, and the
    plug-ins travel as their ``module:callable`` names."""
    return functools.partial(
        pii_scrubber,
        scrub_key(settings),
        settings.scrub_phone_region,
        settings.scrub_scope,
        tuple(settings.scrub_detectors),
        names_and_addresses=settings.scrub_names_addresses,
    )


def sampling_policy(settings: Settings) -> SamplingPolicy:
    try:
        return part_config(
            SamplingPolicy,
            settings,
            "sample_",
            keep_rules=frozenset(settings.sample_keep),
            negative_feedback=frozenset(v.lower() for v in settings.sample_negative_feedback),
        )
    except ValueError as exc:
        raise ConfigError(f"sampling settings: {exc}") from None


def make_pipeline(
    settings: Settings,
    save: SaveFn,
    quiet_seconds: float | None = None,
    save_feedback: SaveFeedbackFn | None = None,
    save_sampling: SaveSamplingFn | None = None,
    spool: Spool | None = None,
    processes: int = 0,
) -> Pipeline:
    """The pipeline; with ``processes`` > 1 it extracts and scrubs in worker processes,
    each building its own scrubber with the factory that builds the thread's."""
    scrubber = scrubber_factory(settings)
    return Pipeline(
        save,
        save_feedback=save_feedback,
        save_sampling=save_sampling,
        sampler=PolicySampler(sampling_policy(settings)),
        # Built here first, so a plug-in that cannot load stops the start, not a worker.
        scrubber=scrubber(),
        quiet_seconds=settings.assembly_quiet_seconds if quiet_seconds is None else quiet_seconds,
        max_traces=settings.max_traces_in_flight,
        max_items=settings.max_spans_in_flight,
        max_bytes=settings.max_buffer_mb * 1024 * 1024,
        spool=spool,
        processes=processes,
        worker_scrubber=scrubber,
    )


def store_pipeline(
    settings: Settings,
    sessions: Sessions,
    quiet_seconds: float | None = None,
    spool: Spool | None = None,
    processes: int = 0,
    before_write: Callable[[], None] | None = None,
) -> Pipeline:
    """The ingest pipeline writing records, feedback and sampling counts to the store
    (each write after ``before_write``: the receiver's checks, see open_receiver_store)."""

    def checked(write: Callable[..., None]) -> Callable[..., None]:
        def call(*args: Any) -> None:
            if before_write is not None:
                before_write()
            write(*args)

        return call

    return make_pipeline(
        settings,
        checked(make_save(sessions)),
        quiet_seconds=quiet_seconds,
        save_feedback=checked(make_save_feedback(sessions)),
        save_sampling=checked(make_save_sampling(sessions)),
        spool=spool,
        processes=processes,
    )


def make_sinks(settings: Settings) -> list[AlertSink]:
    """The log sink, plus every sink the settings turn on; a URL they may not use is refused.
    With FAITHMON_ALERT_RULES, the rules file's routes and sinks instead (checked here,
    so a worker with a broken file does not start)."""
    return sinks_from_settings(settings.alert_rules, part_config(SinkOptions, settings, "alert_"))


def make_judge(settings: Settings, name: str | None = None) -> Judge:
    """The configured judge (or ``name``, as ``faithmon score --judge`` asks)."""
    options = part_config(
        JudgeOptions,
        settings,
        "judge_",
        api_key=settings.judge_api_key or os.environ.get("OPENAI_API_KEY", ""),
        severity_rules=settings.severity_rules,
        policy_rules=settings.policy_rules,
        citation_style=settings.citation_style,
    )
    return build_judge(name or settings.judge, options)


def ceiling(settings: Settings) -> drift.Ceiling:
    """FAITHMON_ALERT_CEILING and FAITHMON_ALERT_CEILING_MIN_RECORDS, over the last hour."""
    return part_config(drift.Ceiling, settings, "alert_", window=timedelta(hours=1))


def drift_config(settings: Settings) -> drift.DriftConfig:
    # Calibrated thresholds are in the store, not the settings: the drift job reads them.
    return part_config(drift.DriftConfig, settings, "drift_", calibrated={})


def proof_floor(settings: Settings) -> ProofFloor:
    """FAITHMON_SENTINEL_MIN_ACCURACY and FAITHMON_SENTINEL_MAX_ERROR_RATE."""
    return part_config(ProofFloor, settings, "sentinel_")


def alert_policy(settings: Settings) -> AlertPolicy:
    """The lifecycle's policy; with a rules file, its kinds' ``for`` and ``keep_firing_for``,
    and reminders as often as its shortest ``repeat_interval`` asks."""
    rules = load_rules(settings.alert_rules) if settings.alert_rules else None
    kinds = rules.kinds if rules is not None else {}
    renotify = timedelta(seconds=settings.alert_renotify)
    repeats = [r.repeat_interval for r in rules.routes if r.repeat_interval] if rules else []
    return AlertPolicy(
        recovery_runs=settings.drift_recovery_runs,
        cooldown=timedelta(seconds=settings.alert_cooldown),
        renotify=min([renotify, *repeats]),
        hold_for={k: r.for_ for k, r in kinds.items() if r.for_},
        keep_firing_for={k: r.keep_firing_for for k, r in kinds.items() if r.keep_firing_for},
    )


def review_policy(settings: Settings) -> QueuePolicy:
    """FAITHMON_REVIEW_*: which evaluations the worker queues for people."""
    return QueuePolicy(
        sample_rate=settings.review_sample_rate,
        low_share=settings.review_low_share,
        double_share=settings.review_double_share,
    )


def health_bounds(settings: Settings) -> HealthBounds:
    """When judge_error (error rate) and ingest_error fire."""
    return HealthBounds(
        judge_error_rate=settings.alert_judge_error_rate,
        judge_error_min=settings.alert_judge_error_min,
        receiver_stale=timedelta(seconds=settings.alert_receiver_stale),
    )


def make_auth(settings: Settings, sessions: Sessions, host: str) -> Auth:
    """The guard's keys (read from the store every few seconds), policy and cookie signer.

    The cookie key derives from the scrub key, which every receiver already shares.
    """
    # Here, not at the top: only `serve` needs the web stack, and every command loads wiring.
    from ..api.app import Auth
    from ..api.auth import AuthConfig, KeyRing
    from ..api.sessions import SessionSigner

    def load() -> list[ApiKey]:
        with sessions() as session:
            return store_keys.list_keys(session)

    config = AuthConfig(
        mode=settings.auth,  # type: ignore[arg-type]
        loopback=is_loopback(host),
        metrics_public=settings.metrics_public,
        allowed_hosts=allowed_hosts(settings.allowed_hosts, host),
    )
    # Beside the spool: a restart while the store is down still knows the keys.
    cache = Path(settings.spool_dir) / "keys.json" if settings.spool_dir else None
    ring = KeyRing(load, config.refresh_seconds, cache=cache)
    return Auth(ring, config, SessionSigner(scrub_key(settings)))


def allowed_hosts(named: tuple[str, ...], host: str) -> frozenset[str] | None:
    """The Host names serve answers to: those named (``*``: any); unset, on a loopback
    bind its address, localhost and the loopback addresses (a DNS-rebound name reads
    nothing of a server open there), and beyond loopback any (keys are required)."""
    if "*" in named:
        return None
    if named:
        return frozenset(n.lower().strip("[]") for n in named)
    if is_loopback(host):
        return frozenset({host.lower().strip("[]"), "localhost", "127.0.0.1", "::1"})
    return None


def is_loopback(host: str) -> bool:
    """Whether ``host`` (what ``serve --host`` binds) is a loopback address only."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False
