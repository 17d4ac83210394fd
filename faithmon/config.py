"""Settings: every ``FAITHMON_*`` variable, read once at the edge by the CLI.

Each setting is declared once, as a field of ``Settings`` with its variable, default, parser
and help text; ``SETTINGS`` lists them. A setting that fills a field of a part's config (the
drift detectors, the judge, the proof floor) reads its default off that field
(``default_of``), so the default too is written once. Values come, in order of precedence,
from explicit overrides, the environment, the settings file named by ``FAITHMON_CONFIG``
(TOML, keys as the variable names or their lower-case field names), then the default. A bad
value fails fast with its setting's name. The README's table and ``deploy/.env.example`` list
the same names (tested).
"""

from __future__ import annotations

import functools
import os
from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from typing import Any

from . import config_paths as paths
from .config_file import part_config as part_config  # re-exported: parts import it here
from .config_file import raw_value, read_file
from .config_values import (
    KEEP_RULES,
    Setting,
    cascade_bar,
    citation_style,
    default_of,
    flag,
    level,
    names,
    non_negative_float,
    non_negative_int,
    one_of,
    optional_float,
    optional_price,
    pairs,
    positive_float,
    positive_int,
    processes,
    rate,
    setting,
    threshold,
)
from .drift import DriftConfig
from .drift.ceiling import Ceiling
from .errors import ConfigError
from .judge import JUDGES, JudgeOptions
from .model.standing import ProofFloor

CONFIG_FILE_ENV = "FAITHMON_CONFIG"

# The parts these settings configure declare their own defaults (they are used without
# the settings too); each such setting reads its default from its part's field.
_judge = functools.partial(default_of, JudgeOptions)
_drift = functools.partial(default_of, DriftConfig)
_floor = functools.partial(default_of, ProofFloor)


@dataclass(frozen=True, slots=True)
class Settings:
    """Every setting, each declared once: its field, variable, default, parser and help."""

    # fmt: off
    data_dir: str = setting(
        "FAITHMON_DATA_DIR", paths.DATA_DIR, paths.folder,
        "Folder of faithmon's state (made with mode 0700): the database, scrub key file, spool "
        "and heartbeat below are in it unless set, and their relative paths are inside it")
    database_url: str = setting(
        "FAITHMON_DATABASE_URL", "", str, "SQLAlchemy URL: sqlite:///path.db or "
        f"postgresql+psycopg://user@host/db (unset: {paths.DATABASE_FILE} in the data dir)")
    db_connect_timeout: float = setting(
        "FAITHMON_DB_CONNECT_TIMEOUT", "10", positive_float,
        "Seconds to open a database connection; a silent peer errors after about three times it")
    db_statement_timeout: float = setting(
        "FAITHMON_DB_STATEMENT_TIMEOUT", "300", non_negative_float,
        "Seconds a statement may run on PostgreSQL (0: no limit; schema upgrades have none)")
    drain_seconds: float = setting(
        "FAITHMON_DRAIN_SECONDS", "20", positive_float,
        "Seconds a stopping receiver spends saving; the rest stays in its spool")
    sample_rate: float = setting(
        "FAITHMON_SAMPLE_RATE", "1.0", rate,
        "Share of traces kept, decided by trace id (0.0 to 1.0)")
    sample_segment_by: tuple[str, ...] = setting(
        "FAITHMON_SAMPLE_SEGMENT_BY", "service,route", names,
        "Labels whose values make a sampling segment")
    sample_rate_limit: float = setting(
        "FAITHMON_SAMPLE_RATE_LIMIT", "0", non_negative_float,
        "Most records kept per second per segment; 0 means no limit")
    sample_minimum_per_hour: int = setting(
        "FAITHMON_SAMPLE_MINIMUM_PER_HOUR", "0", non_negative_int,
        "Records kept per segment and hour whatever the rate")
    sample_keep: tuple[str, ...] = setting(
        "FAITHMON_SAMPLE_KEEP", KEEP_RULES, names,
        "Keep-always rules: app, empty_retrieval, error, negative_feedback, "
        "low_retrieval_score")
    sample_low_score: float | None = setting(
        "FAITHMON_SAMPLE_LOW_SCORE", "", optional_float,
        "Keep a record whose best chunk scored below this (unset: rule off)")
    sample_negative_feedback: tuple[str, ...] = setting(
        "FAITHMON_SAMPLE_NEGATIVE_FEEDBACK", "thumbs_down,down,negative,bad", names,
        "Values of the feedback label that count as negative")
    sample_include: tuple[tuple[str, str], ...] = setting(
        "FAITHMON_SAMPLE_INCLUDE", "", pairs,
        "Keep only records with one of these label=value pairs (empty: all)")
    sample_exclude: tuple[tuple[str, str], ...] = setting(
        "FAITHMON_SAMPLE_EXCLUDE", "", pairs,
        "Drop records with one of these label=value pairs")
    scrub_key: str = setting(
        "FAITHMON_SCRUB_KEY", "", str,
        "Secret key for PII pseudonyms (16+ characters); unset: the key file is used")
    scrub_key_file: str = setting(
        "FAITHMON_SCRUB_KEY_FILE", paths.KEY_FILE, str,
        "Where a generated key is kept (mode 0600) when FAITHMON_SCRUB_KEY is unset")
    scrub_scope: str = setting(
        "FAITHMON_SCRUB_SCOPE", "record", one_of("record", "tenant", "global"),
        "Where equal values get equal pseudonyms: record, tenant or global")
    scrub_phone_region: str = setting(
        "FAITHMON_SCRUB_PHONE_REGION", "US", str.upper,
        "Region used to read phone numbers written without a country code")
    scrub_names_addresses: bool = setting(
        "FAITHMON_SCRUB_NAMES_ADDRESSES", "true", flag,
        "Scrub person names and street addresses as well as the pattern families")
    scrub_detectors: tuple[str, ...] = setting(
        "FAITHMON_SCRUB_DETECTORS", "", names,
        "Extra detectors, as module:callable (for example a Presidio or spaCy NER plug-in)")
    judge: str = setting(
        "FAITHMON_JUDGE", "offline", one_of(*JUDGES),
        "Judge to score records with: offline (no network), openai, or cascade (offline "
        "first, the uncertain claims to openai)")
    judge_model: str = setting(
        "FAITHMON_JUDGE_MODEL", _judge("model"), str,
        "Model the openai judge asks")
    judge_base_url: str = setting(
        "FAITHMON_JUDGE_BASE_URL", _judge("base_url"), str,
        "OpenAI-compatible endpoint, e.g. http://vllm:8000/v1 (unset: OpenAI's)")
    judge_api_key: str = setting(
        "FAITHMON_JUDGE_API_KEY", _judge("api_key"), str,
        "API key of the judge endpoint (unset: OPENAI_API_KEY)")
    judge_mode: str = setting(
        "FAITHMON_JUDGE_MODE", _judge("mode"), one_of("one_call", "two_call"),
        "one_call (claims and verdicts together) or two_call (decompose, then verify)")
    judge_timeout: float = setting(
        "FAITHMON_JUDGE_TIMEOUT", _judge("timeout"), positive_float,
        "Seconds per judge request attempt")
    judge_deadline: float = setting(
        "FAITHMON_JUDGE_DEADLINE", _judge("deadline"), positive_float,
        "Seconds per trace for the judge, retries included")
    judge_max_attempts: int = setting(
        "FAITHMON_JUDGE_MAX_ATTEMPTS", _judge("max_attempts"), positive_int,
        "Attempts per judge request on 408, 429, 5xx and timeouts")
    judge_concurrency: int = setting(
        "FAITHMON_JUDGE_CONCURRENCY", _judge("concurrency"), positive_int,
        "Judge requests in flight at once per process")
    judge_rpm: float = setting(
        "FAITHMON_JUDGE_RPM", _judge("rpm"), non_negative_float,
        "Judge requests per minute per process; 0 means no limit")
    judge_cascade_bar: float = setting(
        "FAITHMON_JUDGE_CASCADE_BAR", _judge("cascade_bar"), cascade_bar,
        "Cascade judge: offline claims at least this confident (0 to 1, 0 excluded) are "
        "settled without the LLM")
    severity_rules: str = setting(
        "FAITHMON_SEVERITY_RULES", _judge("severity_rules"), str,
        "TOML file of severity rules (named patterns and term lists) that make a claim "
        "critical (unset: the shipped rules); part of the judge configuration")
    policy_rules: str = setting(
        "FAITHMON_POLICY_RULES", _judge("policy_rules"), str,
        "TOML file of disclosures an answer must never contain (unset: the shipped rules)")
    citation_style: str = setting(
        "FAITHMON_CITATION_STYLE", _judge("citation_style"), citation_style,
        "Citation markers to read: all, off, or a comma list of numeric, id, footnote, link")
    assembly_quiet_seconds: float = setting(
        "FAITHMON_ASSEMBLY_QUIET_SECONDS", "2.0", non_negative_float,
        "Seconds after a trace's root span ends before its record is built")
    max_traces_in_flight: int = setting(
        "FAITHMON_MAX_TRACES_IN_FLIGHT", "10000", positive_int,
        "Traces buffered for assembly; near it the receiver answers 503, past it the "
        "oldest are stored early as incomplete")
    max_spans_in_flight: int = setting(
        "FAITHMON_MAX_SPANS_IN_FLIGHT", "500000", positive_int,
        "Spans and log records buffered for assembly; past it the receiver answers 503")
    max_buffer_mb: int = setting(
        "FAITHMON_MAX_BUFFER_MB", "512", positive_int,
        "Megabytes of spans buffered for assembly; past it the receiver answers 503")
    spool_dir: str = setting(
        "FAITHMON_SPOOL_DIR", paths.SPOOL_DIR, str,
        "Folder of the receiver's durable spool (one per receiver): every acknowledged "
        "export is fsynced here first and replayed after a crash; empty turns it off")
    spool_max_mb: int = setting(
        "FAITHMON_SPOOL_MAX_MB", "1024", positive_int,
        "Megabytes the spool may hold while the database is down; past it the receiver "
        "answers 503")
    ingest_processes: int = setting("FAITHMON_INGEST_PROCESSES", "0", processes,
        "Worker processes that extract and scrub records (auto: one per core; 0 or 1: none)")
    max_body_bytes: int = setting(
        "FAITHMON_MAX_BODY_BYTES", str(64 * 1024 * 1024), positive_int,
        "Largest OTLP request body accepted, after decompression")
    score_interval: float = setting(
        "FAITHMON_WORKER_SCORE_INTERVAL", "10", positive_float,
        "Seconds between scoring runs of the worker")
    drift_interval: float = setting(
        "FAITHMON_WORKER_DRIFT_INTERVAL", "60", positive_float,
        "Seconds between drift runs of the worker")
    retention_interval: float = setting(
        "FAITHMON_WORKER_RETENTION_INTERVAL", "3600", positive_float,
        "Seconds between retention runs of the worker")
    judge_daily_budget: int = setting(
        "FAITHMON_JUDGE_DAILY_BUDGET", "0", non_negative_int,
        "Judge tokens all workers may spend per UTC day; 0 means no budget")
    judge_price_input: float | None = setting(
        "FAITHMON_JUDGE_PRICE_INPUT", "", optional_price,
        "US dollars per million prompt tokens, for the judges' cost (unset: no cost shown)")
    judge_price_output: float | None = setting(
        "FAITHMON_JUDGE_PRICE_OUTPUT", "", optional_price,
        "US dollars per million completion tokens, for the judges' cost (unset: no cost shown)")
    worker_max_retries: int = setting(
        "FAITHMON_WORKER_MAX_RETRIES", "5", non_negative_int,
        "Times a record is tried again after a retryable judge failure")
    worker_retry_delay: float = setting(
        "FAITHMON_WORKER_RETRY_DELAY", "30", positive_float,
        "Seconds before the first retry of a record; doubles each time, up to an hour")
    worker_retry_max_age: float = setting(
        "FAITHMON_WORKER_RETRY_MAX_AGE", "86400", positive_float,
        "Seconds after ingest past which a failing record is given up as judge_error")
    worker_heartbeat_file: str = setting(
        "FAITHMON_WORKER_HEARTBEAT_FILE", paths.HEARTBEAT_FILE, str,
        "File the worker touches while healthy; `faithmon worker --check` reads it")
    sentinel_interval: float = setting(
        "FAITHMON_SENTINEL_INTERVAL", "21600", non_negative_float,
        "Seconds between sentinel runs (they also run when a worker starts; 0: never)")
    sentinel_min_accuracy: float = setting(
        "FAITHMON_SENTINEL_MIN_ACCURACY", _floor("min_accuracy"), rate,
        "Sentinel accuracy a judge configuration needs before its scores are interpreted; "
        "below it the judge is unproven and its drift alerts are held back")
    sentinel_max_error_rate: float = setting(
        "FAITHMON_SENTINEL_MAX_ERROR_RATE", _floor("max_error_rate"), rate,
        "Highest sentinel false-flag rate, and highest miss rate, of a proven judge")
    worker_batch: int = setting(
        "FAITHMON_WORKER_BATCH", "100", positive_int,
        "Records a worker claims per scoring batch")
    lease_seconds: int = setting(
        "FAITHMON_WORKER_LEASE_SECONDS", "300", positive_int,
        "How long a claimed batch stays leased before another worker may take it")
    retention_days: int = setting(
        "FAITHMON_RETENTION_DAYS", "30", non_negative_int,
        "Days after faithmon received them that records, chunks and claims are deleted (0: kept)")
    drift_dimensions: tuple[str, ...] = setting(
        "FAITHMON_DRIFT_DIMENSIONS",
        "service,route,tenant,model,retriever_version,prompt_version,language", names,
        "Comma-separated labels that define drift segments")
    drift_threshold: float | None = setting(
        "FAITHMON_DRIFT_THRESHOLD", _drift("threshold", none="auto"), threshold,
        "CUSUM threshold h for every detector (pending at h/2, firing at h); auto sets "
        "each from the false-alarm budget, or from `faithmon drift calibrate`")
    drift_false_alarms: float = setting(
        "FAITHMON_DRIFT_FALSE_ALARMS", _drift("false_alarms"), positive_float,
        "False-alarm budget: expected false drift alarms per 30 days across all segments")
    drift_wobble: float = setting(
        "FAITHMON_DRIFT_WOBBLE", _drift("wobble"), non_negative_float,
        "Least wobble of an in-control rate, relative to it, that thresholds allow for "
        "(more when the baseline window shows more)")
    drift_shift: float = setting(
        "FAITHMON_DRIFT_SHIFT", _drift("shift"), positive_float,
        "Design shift: the detector is tuned for a rise of this much in the unsupported rate")
    drift_critical_shift: float = setting(
        "FAITHMON_DRIFT_CRITICAL_SHIFT", _drift("critical_shift"), positive_float,
        "Design shift of the second detector, on records with a critical unsupported claim")
    drift_citation_shift: float = setting(
        "FAITHMON_DRIFT_CITATION_SHIFT", _drift("citation_shift"), positive_float,
        "Design shift of the third detector, on cited answers with a wrong or unresolved citation")
    drift_retrieval_shift: float = setting(
        "FAITHMON_DRIFT_RETRIEVAL_SHIFT", _drift("retrieval_shift"), positive_float,
        "Design shift of the fourth detector, on answers whose chunks miss what the question "
        "asks (context relevance below 0.5)")
    drift_max_delay_days: float = setting(
        "FAITHMON_DRIFT_MAX_DELAY_DAYS", _drift("max_delay_days"), positive_float,
        "A segment whose traffic cannot reveal the design shift within this many days "
        "folds into overall")
    drift_recovery_runs: int = setting(
        "FAITHMON_DRIFT_RECOVERY_RUNS", "3", positive_int,
        "Drift runs in a row a firing segment must look recovered before its alert resolves")
    drift_recovery_records: int = setting(
        "FAITHMON_DRIFT_RECOVERY_RECORDS", _drift("recovery_records"), positive_int,
        "Recent records whose rate's upper 95% bound must be back near the baseline")
    drift_no_data_hours: float = setting(
        "FAITHMON_DRIFT_NO_DATA_HOURS", _drift("no_data_hours"), positive_float,
        "A watched segment with no scored record for this long raises a no_data alert")
    drift_no_data_dimensions: tuple[str, ...] = setting(
        "FAITHMON_DRIFT_NO_DATA_DIMENSIONS", _drift("no_data_dimensions"), names,
        "Labels whose segments are watched for silence (versions retire, so not those)")
    alert_ceiling: float = setting(
        "FAITHMON_ALERT_CEILING", default_of(Ceiling, "ceiling"), rate,
        "While a segment's drift baseline builds, faithfulness_ceiling fires above this "
        "unsupported rate over the last hour")
    alert_ceiling_min_records: int = setting(
        "FAITHMON_ALERT_CEILING_MIN_RECORDS", default_of(Ceiling, "ceiling_min_records"),
        positive_int, "Scored records in the last hour the ceiling needs before it may fire")
    alert_cooldown: float = setting(
        "FAITHMON_ALERT_COOLDOWN", "1800", non_negative_float,
        "Seconds after resolving in which a reopened alert stays quiet until it fires")
    alert_renotify: float = setting(
        "FAITHMON_ALERT_RENOTIFY", "14400", positive_float,
        "Seconds between reminders to the sinks while an alert keeps firing")
    baseline_records: int = setting(
        "FAITHMON_DRIFT_BASELINE_RECORDS", _drift("baseline_records"), positive_int,
        "Scored records the overall baseline window needs before detection starts")
    baseline_days: float = setting(
        "FAITHMON_DRIFT_BASELINE_DAYS", _drift("baseline_days"), non_negative_float,
        "Days the baseline window must span before detection starts")
    segment_min_baseline: int = setting(
        "FAITHMON_DRIFT_SEGMENT_MIN_BASELINE", _drift("segment_min_baseline"), non_negative_int,
        "Baseline records a segment needs for its own rate; fewer uses the overall rate")
    alert_webhook_url: str = setting(
        "FAITHMON_ALERT_WEBHOOK_URL", "", str,
        "POST every alert change here as JSON signed per Standard Webhooks (unset: off)")
    alert_webhook_secret: str = setting(
        "FAITHMON_ALERT_WEBHOOK_SECRET", "", str,
        "Signing secret of the alert webhook (whsec_<base64> or plain text)")
    alert_slack_url: str = setting(
        "FAITHMON_ALERT_SLACK_URL", "", str,
        "Slack incoming-webhook URL for alert changes (unset: off)")
    alert_alertmanager_url: str = setting(
        "FAITHMON_ALERT_ALERTMANAGER_URL", "", str,
        "Alertmanager base URL; alerts go to /api/v2/alerts (unset: off)")
    alert_allow_link_local: bool = setting(
        "FAITHMON_ALERT_ALLOW_LINK_LOCAL", "false", flag,
        "Let the alert URLs reach link-local and cloud metadata addresses "
        "(169.254.0.0/16, fe80::/10, metadata.google.internal); refused by default")
    alert_smtp_host: str = setting(
        "FAITHMON_ALERT_SMTP_HOST", "", str,
        "SMTP server for alert e-mails, host or host:port (unset: off)")
    alert_smtp_from: str = setting(
        "FAITHMON_ALERT_SMTP_FROM", "faithmon@localhost", str,
        "Sender address of alert e-mails")
    alert_smtp_to: tuple[str, ...] = setting(
        "FAITHMON_ALERT_SMTP_TO", "", names,
        "Comma-separated recipients of alert e-mails")
    alert_smtp_user: str = setting(
        "FAITHMON_ALERT_SMTP_USER", "", str,
        "SMTP login (with FAITHMON_ALERT_SMTP_PASSWORD); STARTTLS is used when set")
    alert_smtp_password: str = setting(
        "FAITHMON_ALERT_SMTP_PASSWORD", "", str,
        "SMTP password")
    alert_rules: str = setting(
        "FAITHMON_ALERT_RULES", "", str,
        "TOML file of alert sinks, routes and per-kind rules (unset: the settings above)")
    alert_judge_error_rate: float = setting(
        "FAITHMON_ALERT_JUDGE_ERROR_RATE", "0.2", rate,
        "Share of a judge's recent evaluations ending in judge_error that raises judge_error")
    alert_judge_error_min: int = setting(
        "FAITHMON_ALERT_JUDGE_ERROR_MIN", "20", positive_int,
        "Recent evaluations (the last 200 within the hour) that share needs to count")
    alert_receiver_stale: float = setting(
        "FAITHMON_ALERT_RECEIVER_STALE", "120", positive_float,
        "Seconds without a running receiver's heartbeat, or of failing saves, that raise "
        "ingest_error")
    review_sample_rate: float = setting(
        "FAITHMON_REVIEW_SAMPLE_RATE", "0.02", rate,
        "Share of all-supported evaluations queued for review; 1 queues every evaluation")
    review_low_share: float = setting(
        "FAITHMON_REVIEW_LOW_SHARE", "0.25", rate,
        "Share of evaluations with an unsupported claim queued (critical ones always are)")
    review_double_share: float = setting(
        "FAITHMON_REVIEW_DOUBLE_SHARE", "0.1", rate,
        "Share of review items given to two reviewers, for inter-reviewer agreement")
    review_max_false_rejection: float = setting(
        "FAITHMON_REVIEW_MAX_FALSE_REJECTION", "0.1", rate,
        "Bound on false rejection under which review calibrate minimises false acceptance")
    review_guard_band: float = setting(
        "FAITHMON_REVIEW_GUARD_BAND", "0.05", rate,
        "Half-width of the score band around a threshold whose answers go to review")
    review_min_kappa: float = setting(
        "FAITHMON_REVIEW_MIN_KAPPA", "0.4", rate,
        "Judge-vs-reviewer kappa (answer level) under which judge_disagreement fires")
    review_min_labels: int = setting(
        "FAITHMON_REVIEW_MIN_LABELS", "30", positive_int,
        "Reviewed answers kappa needs before judge_disagreement can fire, and a segment "
        "before review calibrate stores its threshold")
    telemetry_endpoint: str = setting(
        "FAITHMON_TELEMETRY_ENDPOINT", "", str,
        "OTLP/HTTP base URL for the worker's metrics and evaluation events (unset: off)")
    auth: str = setting(
        "FAITHMON_AUTH", "auto", one_of("auto", "required", "off"),
        "auto: open only on a loopback address while no API key exists; required; off")
    metrics_public: bool = setting(
        "FAITHMON_METRICS_PUBLIC", "false", flag,
        "Serve /metrics without an API key (for a Prometheus that cannot send one)")
    allowed_hosts: tuple[str, ...] = setting(
        "FAITHMON_ALLOWED_HOSTS", "", names,
        "Host names serve answers to, comma-separated; * any (unset: on a loopback bind "
        "that address, localhost and 127.0.0.1; beyond loopback any, keys being required)")
    log_level: str = setting(
        "FAITHMON_LOG_LEVEL", "INFO", level, "Log level of faithmon's processes")
    # fmt: on

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None, **overrides: Any) -> Settings:
        """Parse every setting; explicit ``overrides`` win, then the environment, then
        the ``FAITHMON_CONFIG`` file, then the defaults."""
        env = os.environ if environ is None else environ
        from_file = read_file(env.get(CONFIG_FILE_ENV, ""), CONFIG_FILE_ENV)
        values: dict[str, Any] = {}
        for declared in SETTINGS:
            if declared.field in overrides:
                values[declared.field] = overrides.pop(declared.field)
                continue
            raw, source = raw_value(declared, env, from_file, env.get(CONFIG_FILE_ENV, ""))
            try:
                values[declared.field] = declared.parse(raw.strip())
            except ValueError as exc:
                raise ConfigError(f"{source}={raw!r}: {exc}") from None
        if overrides:
            raise ConfigError(f"unknown settings: {', '.join(sorted(overrides))}")
        paths.place(values)
        return cls(**values)


SETTINGS: tuple[Setting, ...] = tuple(
    replace(f.metadata["setting"], field=f.name) for f in fields(Settings)
)
"""Every setting in declaration order (the README's table and ``.env.example`` follow it)."""
