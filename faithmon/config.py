"""Settings: every ``FAITHMON_*`` variable, read once at the edge by the CLI.

Each setting is declared once in ``SETTINGS`` with its default, its parser and
its help text. Values come, in order of precedence, from explicit overrides,
the environment, the settings file named by ``FAITHMON_CONFIG`` (TOML, keys as
the variable names or their lower-case field names), then the default. A bad
value fails fast with the setting's name. The README's table and
``deploy/.env.example`` list the same names (tests keep them in step).
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from .config_values import (
    _flag,
    _level,
    _names,
    _non_negative_float,
    _non_negative_int,
    _one_of,
    _optional_float,
    _pairs,
    _positive_float,
    _positive_int,
    _rate,
    _threshold,
)
from .errors import ConfigError

CONFIG_FILE_ENV = "FAITHMON_CONFIG"


@dataclass(frozen=True, slots=True)
class Setting:
    env: str
    field: str
    default: str
    parse: Callable[[str], Any]
    help: str


_KEEP_RULES = "app,empty_retrieval,error,negative_feedback,low_retrieval_score"

# fmt: off
SETTINGS: tuple[Setting, ...] = (
    Setting("FAITHMON_DATABASE_URL", "database_url", "sqlite:///faithmon.db", str,
            "SQLAlchemy URL: sqlite:///path.db or postgresql+psycopg://user@host/db"),
    Setting("FAITHMON_SAMPLE_RATE", "sample_rate", "1.0", _rate,
            "Share of traces kept, decided by trace id (0.0 to 1.0)"),
    Setting("FAITHMON_SAMPLE_SEGMENT_BY", "sample_segment_by", "service,route", _names,
            "Labels whose values make a sampling segment"),
    Setting("FAITHMON_SAMPLE_RATE_LIMIT", "sample_rate_limit", "0", _non_negative_float,
            "Most records kept per second per segment; 0 means no limit"),
    Setting("FAITHMON_SAMPLE_MINIMUM_PER_HOUR", "sample_minimum_per_hour", "0",
            _non_negative_int, "Records kept per segment and hour whatever the rate"),
    Setting("FAITHMON_SAMPLE_KEEP", "sample_keep", _KEEP_RULES, _names,
            "Keep-always rules: app, empty_retrieval, error, negative_feedback, "
            "low_retrieval_score"),
    Setting("FAITHMON_SAMPLE_LOW_SCORE", "sample_low_score", "", _optional_float,
            "Keep a record whose best chunk scored below this (unset: rule off)"),
    Setting("FAITHMON_SAMPLE_NEGATIVE_FEEDBACK", "sample_negative_feedback",
            "thumbs_down,down,negative,bad", _names,
            "Values of the feedback label that count as negative"),
    Setting("FAITHMON_SAMPLE_INCLUDE", "sample_include", "", _pairs,
            "Keep only records with one of these label=value pairs (empty: all)"),
    Setting("FAITHMON_SAMPLE_EXCLUDE", "sample_exclude", "", _pairs,
            "Drop records with one of these label=value pairs"),
    Setting("FAITHMON_SCRUB_KEY", "scrub_key", "", str,
            "Secret key for PII pseudonyms (16+ characters); unset: the key file is used"),
    Setting("FAITHMON_SCRUB_KEY_FILE", "scrub_key_file", "faithmon-scrub.key", str,
            "Where a generated key is kept (mode 0600) when FAITHMON_SCRUB_KEY is unset"),
    Setting("FAITHMON_SCRUB_SCOPE", "scrub_scope", "record", _one_of("record", "tenant", "global"),
            "Where equal values get equal pseudonyms: record, tenant or global"),
    Setting("FAITHMON_SCRUB_PHONE_REGION", "scrub_phone_region", "US", str.upper,
            "Region used to read phone numbers written without a country code"),
    Setting("FAITHMON_SCRUB_DETECTORS", "scrub_detectors", "", _names,
            "Extra detectors, as module:callable (for example a Presidio or spaCy NER plug-in)"),
    Setting("FAITHMON_JUDGE", "judge", "offline", _one_of("offline", "openai"),
            "Judge to score records with: offline (no network) or openai"),
    Setting("FAITHMON_JUDGE_MODEL", "judge_model", "gpt-4o-mini", str,
            "Model the openai judge asks"),
    Setting("FAITHMON_JUDGE_BASE_URL", "judge_base_url", "", str,
            "OpenAI-compatible endpoint, e.g. http://vllm:8000/v1 (unset: OpenAI's)"),
    Setting("FAITHMON_JUDGE_API_KEY", "judge_api_key", "", str,
            "API key of the judge endpoint (unset: OPENAI_API_KEY)"),
    Setting("FAITHMON_JUDGE_MODE", "judge_mode", "one_call", _one_of("one_call", "two_call"),
            "one_call (claims and verdicts together) or two_call (decompose, then verify)"),
    Setting("FAITHMON_JUDGE_TIMEOUT", "judge_timeout", "30", _positive_float,
            "Seconds per judge request attempt"),
    Setting("FAITHMON_JUDGE_DEADLINE", "judge_deadline", "120", _positive_float,
            "Seconds per trace for the judge, retries included"),
    Setting("FAITHMON_JUDGE_MAX_ATTEMPTS", "judge_max_attempts", "3", _positive_int,
            "Attempts per judge request on 408, 429, 5xx and timeouts"),
    Setting("FAITHMON_JUDGE_CONCURRENCY", "judge_concurrency", "4", _positive_int,
            "Judge requests in flight at once per process"),
    Setting("FAITHMON_JUDGE_RPM", "judge_rpm", "0", _non_negative_float,
            "Judge requests per minute per process; 0 means no limit"),
    Setting("FAITHMON_ASSEMBLY_QUIET_SECONDS", "assembly_quiet_seconds", "2.0",
            _non_negative_float,
            "Seconds after a trace's root span ends before its record is built"),
    Setting("FAITHMON_MAX_TRACES_IN_FLIGHT", "max_traces_in_flight", "10000", _positive_int,
            "Traces buffered for assembly; near it the receiver answers 503, past it the "
            "oldest are stored early as incomplete"),
    Setting("FAITHMON_MAX_SPANS_IN_FLIGHT", "max_spans_in_flight", "500000", _positive_int,
            "Spans and log records buffered for assembly; past it the receiver answers 503"),
    Setting("FAITHMON_MAX_BUFFER_MB", "max_buffer_mb", "512", _positive_int,
            "Megabytes of spans buffered for assembly; past it the receiver answers 503"),
    Setting("FAITHMON_SPOOL_DIR", "spool_dir", "faithmon-spool", str,
            "Folder of the receiver's durable spool (one per receiver): every acknowledged "
            "export is fsynced here first and replayed after a crash; empty turns it off"),
    Setting("FAITHMON_SPOOL_MAX_MB", "spool_max_mb", "1024", _positive_int,
            "Megabytes the spool may hold while the database is down; past it the receiver "
            "answers 503"),
    Setting("FAITHMON_MAX_BODY_BYTES", "max_body_bytes", str(64 * 1024 * 1024), _positive_int,
            "Largest OTLP request body accepted, after decompression"),
    Setting("FAITHMON_WORKER_SCORE_INTERVAL", "score_interval", "10", _positive_float,
            "Seconds between scoring runs of the worker"),
    Setting("FAITHMON_WORKER_DRIFT_INTERVAL", "drift_interval", "60", _positive_float,
            "Seconds between drift runs of the worker"),
    Setting("FAITHMON_WORKER_RETENTION_INTERVAL", "retention_interval", "3600", _positive_float,
            "Seconds between retention runs of the worker"),
    Setting("FAITHMON_JUDGE_DAILY_BUDGET", "judge_daily_budget", "0", _non_negative_int,
            "Judge tokens all workers may spend per UTC day; 0 means no budget"),
    Setting("FAITHMON_WORKER_MAX_RETRIES", "worker_max_retries", "5", _non_negative_int,
            "Times a record is tried again after a retryable judge failure"),
    Setting("FAITHMON_WORKER_RETRY_DELAY", "worker_retry_delay", "30", _positive_float,
            "Seconds before the first retry of a record; doubles each time, up to an hour"),
    Setting("FAITHMON_WORKER_RETRY_MAX_AGE", "worker_retry_max_age", "86400", _positive_float,
            "Seconds after ingest past which a failing record is given up as judge_error"),
    Setting("FAITHMON_WORKER_HEARTBEAT_FILE", "worker_heartbeat_file",
            "faithmon-worker.heartbeat", str,
            "File the worker touches while healthy; `faithmon worker --check` reads it"),
    Setting("FAITHMON_SENTINEL_INTERVAL", "sentinel_interval", "21600", _non_negative_float,
            "Seconds between sentinel runs (they also run when a worker starts; 0: never)"),
    Setting("FAITHMON_WORKER_BATCH", "worker_batch", "100", _positive_int,
            "Records a worker claims per scoring batch"),
    Setting("FAITHMON_WORKER_LEASE_SECONDS", "lease_seconds", "300", _positive_int,
            "How long a claimed batch stays leased before another worker may take it"),
    Setting("FAITHMON_RETENTION_DAYS", "retention_days", "30", _non_negative_int,
            "Records, chunks and claims older than this are deleted (0 keeps them)"),
    Setting("FAITHMON_DRIFT_DIMENSIONS", "drift_dimensions",
            "service,route,tenant,model,retriever_version,prompt_version,language", _names,
            "Comma-separated labels that define drift segments"),
    Setting("FAITHMON_DRIFT_THRESHOLD", "drift_threshold", "auto", _threshold,
            "CUSUM threshold h for every detector (pending at h/2, firing at h); auto sets "
            "each from the false-alarm budget, or from `faithmon drift calibrate`"),
    Setting("FAITHMON_DRIFT_FALSE_ALARMS", "drift_false_alarms", "1", _positive_float,
            "False-alarm budget: expected false drift alarms per 30 days across all segments"),
    Setting("FAITHMON_DRIFT_WOBBLE", "drift_wobble", "0.07", _non_negative_float,
            "Least wobble of an in-control rate, relative to it, that thresholds allow for "
            "(more when the baseline window shows more)"),
    Setting("FAITHMON_DRIFT_SHIFT", "drift_shift", "0.08", _positive_float,
            "Design shift: the detector is tuned for a rise of this much in the unsupported rate"),
    Setting("FAITHMON_DRIFT_CRITICAL_SHIFT", "drift_critical_shift", "0.04", _positive_float,
            "Design shift of the second detector, on records with a critical unsupported claim"),
    Setting("FAITHMON_DRIFT_MAX_DELAY_DAYS", "drift_max_delay_days", "7", _positive_float,
            "A segment whose traffic cannot reveal the design shift within this many days "
            "folds into overall"),
    Setting("FAITHMON_DRIFT_RECOVERY_RUNS", "drift_recovery_runs", "3", _positive_int,
            "Drift runs in a row a firing segment must look recovered before its alert resolves"),
    Setting("FAITHMON_DRIFT_RECOVERY_RECORDS", "drift_recovery_records", "200", _positive_int,
            "Recent records whose rate's upper 95% bound must be back near the baseline"),
    Setting("FAITHMON_DRIFT_NO_DATA_HOURS", "drift_no_data_hours", "6", _positive_float,
            "A watched segment with no scored record for this long raises a no_data alert"),
    Setting("FAITHMON_DRIFT_NO_DATA_DIMENSIONS", "drift_no_data_dimensions",
            "service,route,tenant", _names,
            "Labels whose segments are watched for silence (versions retire, so not those)"),
    Setting("FAITHMON_ALERT_COOLDOWN", "alert_cooldown", "1800", _non_negative_float,
            "Seconds after resolving in which a reopened alert stays quiet until it fires"),
    Setting("FAITHMON_ALERT_RENOTIFY", "alert_renotify", "14400", _positive_float,
            "Seconds between reminders to the sinks while an alert keeps firing"),
    Setting("FAITHMON_DRIFT_BASELINE_RECORDS", "baseline_records", "2000", _positive_int,
            "Scored records the overall baseline window needs before detection starts"),
    Setting("FAITHMON_DRIFT_BASELINE_DAYS", "baseline_days", "7", _non_negative_float,
            "Days the baseline window must span before detection starts"),
    Setting("FAITHMON_DRIFT_SEGMENT_MIN_BASELINE", "segment_min_baseline", "100",
            _non_negative_int,
            "Baseline records a segment needs for its own rate; fewer uses the overall rate"),
    Setting("FAITHMON_ALERT_WEBHOOK_URL", "alert_webhook_url", "", str,
            "POST every alert change here as JSON signed per Standard Webhooks (unset: off)"),
    Setting("FAITHMON_ALERT_WEBHOOK_SECRET", "alert_webhook_secret", "", str,
            "Signing secret of the alert webhook (whsec_<base64> or plain text)"),
    Setting("FAITHMON_ALERT_SLACK_URL", "alert_slack_url", "", str,
            "Slack incoming-webhook URL for alert changes (unset: off)"),
    Setting("FAITHMON_ALERT_ALERTMANAGER_URL", "alert_alertmanager_url", "", str,
            "Alertmanager base URL; alerts go to /api/v2/alerts (unset: off)"),
    Setting("FAITHMON_ALERT_ALLOW_LINK_LOCAL", "alert_allow_link_local", "false", _flag,
            "Let the alert URLs reach link-local and cloud metadata addresses "
            "(169.254.0.0/16, fe80::/10, metadata.google.internal); refused by default"),
    Setting("FAITHMON_ALERT_SMTP_HOST", "alert_smtp_host", "", str,
            "SMTP server for alert e-mails, host or host:port (unset: off)"),
    Setting("FAITHMON_ALERT_SMTP_FROM", "alert_smtp_from", "faithmon@localhost", str,
            "Sender address of alert e-mails"),
    Setting("FAITHMON_ALERT_SMTP_TO", "alert_smtp_to", "", _names,
            "Comma-separated recipients of alert e-mails"),
    Setting("FAITHMON_ALERT_SMTP_USER", "alert_smtp_user", "", str,
            "SMTP login (with FAITHMON_ALERT_SMTP_PASSWORD); STARTTLS is used when set"),
    Setting("FAITHMON_ALERT_SMTP_PASSWORD", "alert_smtp_password", "", str,
            "SMTP password"),
    Setting("FAITHMON_TELEMETRY_ENDPOINT", "telemetry_endpoint", "", str,
            "OTLP/HTTP base URL for the worker's metrics and evaluation events (unset: off)"),
    Setting("FAITHMON_LOG_LEVEL", "log_level", "INFO", _level,
            "Log level of faithmon's processes"),
)
# fmt: on


@dataclass(frozen=True, slots=True)
class Settings:
    database_url: str
    sample_rate: float
    sample_segment_by: tuple[str, ...]
    sample_rate_limit: float
    sample_minimum_per_hour: int
    sample_keep: tuple[str, ...]
    sample_low_score: float | None
    sample_negative_feedback: tuple[str, ...]
    sample_include: tuple[tuple[str, str], ...]
    sample_exclude: tuple[tuple[str, str], ...]
    scrub_key: str
    scrub_key_file: str
    scrub_scope: str
    scrub_phone_region: str
    scrub_detectors: tuple[str, ...]
    judge: str
    judge_model: str
    judge_base_url: str
    judge_api_key: str
    judge_mode: str
    judge_timeout: float
    judge_deadline: float
    judge_max_attempts: int
    judge_concurrency: int
    judge_rpm: float
    assembly_quiet_seconds: float
    max_traces_in_flight: int
    max_spans_in_flight: int
    max_buffer_mb: int
    spool_dir: str
    spool_max_mb: int
    max_body_bytes: int
    score_interval: float
    drift_interval: float
    retention_interval: float
    judge_daily_budget: int
    worker_max_retries: int
    worker_retry_delay: float
    worker_retry_max_age: float
    worker_heartbeat_file: str
    sentinel_interval: float
    worker_batch: int
    lease_seconds: int
    retention_days: int
    drift_dimensions: tuple[str, ...]
    drift_threshold: float | None
    drift_false_alarms: float
    drift_wobble: float
    drift_shift: float
    drift_critical_shift: float
    drift_max_delay_days: float
    drift_recovery_runs: int
    drift_recovery_records: int
    drift_no_data_hours: float
    drift_no_data_dimensions: tuple[str, ...]
    alert_cooldown: float
    alert_renotify: float
    baseline_records: int
    baseline_days: float
    segment_min_baseline: int
    alert_webhook_url: str
    alert_webhook_secret: str
    alert_slack_url: str
    alert_alertmanager_url: str
    alert_allow_link_local: bool
    alert_smtp_host: str
    alert_smtp_from: str
    alert_smtp_to: tuple[str, ...]
    alert_smtp_user: str
    alert_smtp_password: str
    telemetry_endpoint: str
    log_level: str

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None, **overrides: Any) -> Settings:
        """Parse every setting; explicit ``overrides`` win, then the environment, then
        the ``FAITHMON_CONFIG`` file, then the defaults."""
        env = os.environ if environ is None else environ
        from_file = _read_file(env.get(CONFIG_FILE_ENV, ""))
        values: dict[str, Any] = {}
        for setting in SETTINGS:
            if setting.field in overrides:
                values[setting.field] = overrides.pop(setting.field)
                continue
            raw = env.get(setting.env)
            source = setting.env
            if raw is None:
                raw = from_file.get(setting.env, from_file.get(setting.field))
                source = f"{setting.env} (in {env.get(CONFIG_FILE_ENV)})"
            if raw is None:
                raw, source = setting.default, setting.env
            try:
                values[setting.field] = setting.parse(raw.strip())
            except ValueError as exc:
                raise ConfigError(f"{source}={raw!r}: {exc}") from None
        if overrides:
            raise ConfigError(f"unknown settings: {', '.join(sorted(overrides))}")
        return cls(**values)


def _read_file(path: str) -> dict[str, str]:
    if not path:
        return {}
    try:
        document = tomllib.loads(Path(path).read_text())
    except OSError as exc:
        raise ConfigError(f"{CONFIG_FILE_ENV}={path!r}: {exc.strerror}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{CONFIG_FILE_ENV}={path!r}: not TOML ({exc})") from None
    known = {s.env for s in SETTINGS} | {s.field for s in SETTINGS}
    unknown = sorted(set(document) - known)
    if unknown:
        raise ConfigError(f"{path}: unknown settings {', '.join(unknown)}")
    return {
        key: ",".join(map(str, value)) if isinstance(value, list) else str(value)
        for key, value in document.items()
    }


def field_names() -> set[str]:
    return {f.name for f in fields(Settings)}
