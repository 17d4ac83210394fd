"""Settings: every ``FAITHMON_*`` variable, read once at the edge by the CLI.

Each setting is declared once in ``SETTINGS`` with its default and help text;
``Settings.from_env`` parses them and fails fast on a bad value. The README's
configuration table lists the same names (a test keeps the two in step).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields
from typing import Any

from .errors import ConfigError


@dataclass(frozen=True, slots=True)
class Setting:
    env: str
    field: str
    default: str
    help: str


SETTINGS: tuple[Setting, ...] = (
    Setting(
        "FAITHMON_DATABASE_URL",
        "database_url",
        "sqlite:///faithmon.db",
        "SQLAlchemy URL: sqlite:///path.db or postgresql+psycopg://user@host/db",
    ),
    Setting(
        "FAITHMON_SAMPLE_RATE",
        "sample_rate",
        "1.0",
        "Share of traces kept, decided by trace id (0.0 to 1.0)",
    ),
    Setting(
        "FAITHMON_SCRUB_KEY",
        "scrub_key",
        "",
        "Secret key for PII pseudonyms; unset means a random key per process",
    ),
    Setting(
        "FAITHMON_SCRUB_PHONE_REGION",
        "scrub_phone_region",
        "US",
        "Region used to read phone numbers written without a country code",
    ),
    Setting("FAITHMON_JUDGE", "judge", "offline", "Judge to score records with: offline"),
    Setting(
        "FAITHMON_ASSEMBLY_QUIET_SECONDS",
        "assembly_quiet_seconds",
        "2.0",
        "Seconds after a trace's root span ends before its record is built",
    ),
    Setting(
        "FAITHMON_MAX_TRACES_IN_FLIGHT",
        "max_traces_in_flight",
        "10000",
        "Traces buffered for assembly; past it the oldest are flushed early",
    ),
    Setting(
        "FAITHMON_MAX_SPANS_IN_FLIGHT",
        "max_spans_in_flight",
        "500000",
        "Spans and log records buffered for assembly; past it the receiver answers 503",
    ),
    Setting(
        "FAITHMON_MAX_BODY_BYTES",
        "max_body_bytes",
        str(64 * 1024 * 1024),
        "Largest OTLP request body accepted, after decompression",
    ),
    Setting(
        "FAITHMON_WORKER_SCORE_INTERVAL",
        "score_interval",
        "10",
        "Seconds between scoring runs of the worker",
    ),
    Setting(
        "FAITHMON_WORKER_DRIFT_INTERVAL",
        "drift_interval",
        "60",
        "Seconds between drift runs of the worker",
    ),
    Setting(
        "FAITHMON_WORKER_BATCH", "worker_batch", "100", "Records a worker claims per scoring batch"
    ),
    Setting(
        "FAITHMON_WORKER_LEASE_SECONDS",
        "lease_seconds",
        "300",
        "How long a claimed batch stays leased before another worker may take it",
    ),
    Setting(
        "FAITHMON_DRIFT_DIMENSIONS",
        "drift_dimensions",
        "service,route,tenant,model,retriever_version",
        "Comma-separated labels that define drift segments",
    ),
    Setting(
        "FAITHMON_DRIFT_THRESHOLD",
        "drift_threshold",
        "15",
        "CUSUM threshold h: pending at h/2, firing at h",
    ),
    Setting(
        "FAITHMON_DRIFT_SHIFT",
        "drift_shift",
        "0.08",
        "Design shift: the detector is tuned for a rise of this much in the unsupported rate",
    ),
    Setting(
        "FAITHMON_DRIFT_BASELINE_RECORDS",
        "baseline_records",
        "2000",
        "Scored records the overall baseline window needs before detection starts",
    ),
    Setting(
        "FAITHMON_DRIFT_BASELINE_DAYS",
        "baseline_days",
        "7",
        "Days the baseline window must span before detection starts",
    ),
    Setting(
        "FAITHMON_DRIFT_SEGMENT_MIN_BASELINE",
        "segment_min_baseline",
        "100",
        "Baseline records a segment needs for its own rate; fewer uses the overall rate",
    ),
    Setting("FAITHMON_LOG_LEVEL", "log_level", "INFO", "Log level of faithmon's processes"),
)


def _rate(value: str) -> float:
    rate = float(value)
    if not 0.0 <= rate <= 1.0:
        raise ValueError("must be between 0.0 and 1.0")
    return rate


def _positive_float(value: str) -> float:
    number = float(value)
    if number <= 0:
        raise ValueError("must be positive")
    return number


def _non_negative_float(value: str) -> float:
    number = float(value)
    if number < 0:
        raise ValueError("must not be negative")
    return number


def _positive_int(value: str) -> int:
    number = int(value)
    if number <= 0:
        raise ValueError("must be a positive integer")
    return number


def _non_negative_int(value: str) -> int:
    number = int(value)
    if number < 0:
        raise ValueError("must not be negative")
    return number


def _names(value: str) -> tuple[str, ...]:
    return tuple(name.strip() for name in value.split(",") if name.strip())


def _judge(value: str) -> str:
    if value not in ("offline",):
        raise ValueError("known judges: offline")
    return value


def _level(value: str) -> str:
    level = value.upper()
    if level not in ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"):
        raise ValueError("must be DEBUG, INFO, WARNING, ERROR or CRITICAL")
    return level


_PARSERS: dict[str, Callable[[str], Any]] = {
    "database_url": str,
    "sample_rate": _rate,
    "scrub_key": str,
    "scrub_phone_region": str.upper,
    "judge": _judge,
    "assembly_quiet_seconds": _non_negative_float,
    "max_traces_in_flight": _positive_int,
    "max_spans_in_flight": _positive_int,
    "max_body_bytes": _positive_int,
    "score_interval": _positive_float,
    "drift_interval": _positive_float,
    "worker_batch": _positive_int,
    "lease_seconds": _positive_int,
    "drift_dimensions": _names,
    "drift_threshold": _positive_float,
    "drift_shift": _positive_float,
    "baseline_records": _positive_int,
    "baseline_days": _non_negative_float,
    "segment_min_baseline": _non_negative_int,
    "log_level": _level,
}


@dataclass(frozen=True, slots=True)
class Settings:
    database_url: str
    sample_rate: float
    scrub_key: str
    scrub_phone_region: str
    judge: str
    assembly_quiet_seconds: float
    max_traces_in_flight: int
    max_spans_in_flight: int
    max_body_bytes: int
    score_interval: float
    drift_interval: float
    worker_batch: int
    lease_seconds: int
    drift_dimensions: tuple[str, ...]
    drift_threshold: float
    drift_shift: float
    baseline_records: int
    baseline_days: float
    segment_min_baseline: int
    log_level: str

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None, **overrides: Any) -> Settings:
        """Parse every setting; explicit ``overrides`` win over the environment."""
        env = os.environ if environ is None else environ
        values: dict[str, Any] = {}
        for setting in SETTINGS:
            if setting.field in overrides:
                values[setting.field] = overrides.pop(setting.field)
                continue
            raw = env.get(setting.env, setting.default)
            try:
                values[setting.field] = _PARSERS[setting.field](raw.strip())
            except ValueError as exc:
                raise ConfigError(f"{setting.env}={raw!r}: {exc}") from None
        if overrides:
            raise ConfigError(f"unknown settings: {', '.join(sorted(overrides))}")
        return cls(**values)


assert {f.name for f in fields(Settings)} == {s.field for s in SETTINGS} == set(_PARSERS)
