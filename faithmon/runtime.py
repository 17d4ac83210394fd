"""Composition helpers shared by the CLI and the demo: settings in, parts out."""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from sqlalchemy.orm import Session, sessionmaker

from . import drift
from .config import Settings
from .errors import ConfigError
from .ingest.pipeline import Pipeline
from .ingest.sampler import RatioSampler
from .ingest.scrub import PiiScrubber
from .judge import OfflineJudge
from .model import Feedback, Judge, RagRecord, SaveFeedbackFn, SaveFn
from .store import engine as store_engine
from .store import repo

logger = logging.getLogger(__name__)


@contextmanager
def open_store(settings: Settings, upgrade: bool = True) -> Iterator[sessionmaker[Session]]:
    """Sessions on an upgraded schema; the engine's connections close on exit."""
    engine = store_engine.make_engine(settings.database_url)
    try:
        if upgrade:
            store_engine.upgrade(engine)
        yield store_engine.session_factory(engine)
    finally:
        engine.dispose()


def make_save(sessions: sessionmaker[Session]) -> SaveFn:
    def save(records: Sequence[RagRecord]) -> None:
        with sessions() as session, session.begin():
            repo.save_records(session, records)

    return save


def make_save_feedback(sessions: sessionmaker[Session]) -> SaveFeedbackFn:
    def save(items: Sequence[Feedback]) -> None:
        with sessions() as session, session.begin():
            repo.save_feedback(session, items)

    return save


def scrub_key(settings: Settings) -> bytes:
    if settings.scrub_key:
        key = settings.scrub_key.encode()
        if len(key) < 16:
            raise ConfigError("FAITHMON_SCRUB_KEY must be at least 16 characters")
        return key
    logger.warning(
        "FAITHMON_SCRUB_KEY is not set: using a random key, so pseudonyms will not match "
        "across restarts or processes"
    )
    return os.urandom(32)


def make_pipeline(
    settings: Settings,
    save: SaveFn,
    quiet_seconds: float | None = None,
    save_feedback: SaveFeedbackFn | None = None,
) -> Pipeline:
    return Pipeline(
        save,
        save_feedback=save_feedback,
        sampler=RatioSampler(settings.sample_rate),
        scrubber=PiiScrubber(scrub_key(settings), settings.scrub_phone_region),
        quiet_seconds=settings.assembly_quiet_seconds if quiet_seconds is None else quiet_seconds,
        max_traces=settings.max_traces_in_flight,
        max_items=settings.max_spans_in_flight,
    )


def make_judge(settings: Settings) -> Judge:
    if settings.judge == "offline":
        return OfflineJudge()
    raise ConfigError(f"unknown judge {settings.judge!r}")


def drift_config(settings: Settings) -> drift.DriftConfig:
    return drift.DriftConfig(
        dimensions=settings.drift_dimensions,
        threshold=settings.drift_threshold,
        shift=settings.drift_shift,
        baseline_records=settings.baseline_records,
        baseline_days=settings.baseline_days,
        segment_min_baseline=settings.segment_min_baseline,
    )
