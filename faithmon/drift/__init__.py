"""Drift detection: production drift per segment, per tenant partition (pure functions
over outcomes)."""

from ..model import MIN_RATE, Baseline, FrozenBaselines, Stream
from .arl import (
    alarm_rate,
    cusum,
    first_alarm,
    increments,
    learn,
    run_length,
    solved,
    threshold_for,
)
from .baseline import baseline_window, compute_baselines, freeze, partitions, wilson_interval
from .budget import thresholds
from .calibrate import Calibration, calibrate
from .ceiling import Ceiling, progress_line
from .config import (
    CEILING_RULE,
    CITATION_RULE,
    CRITICAL_RULE,
    NO_DATA_RULE,
    RETRIEVAL_RULE,
    RULE,
    RULES,
    STREAMS,
    TENANT,
    DriftConfig,
    Level,
    detector_key,
)
from .detect import Reading, detect, read, restart_points
from .silence import Silence, silences, silences_of
from .summary import summarize
from .weights import REASONS as SAMPLING_REASONS
from .weights import sampling_weights, weigh

__all__ = [
    "CEILING_RULE",
    "CITATION_RULE",
    "CRITICAL_RULE",
    "MIN_RATE",
    "NO_DATA_RULE",
    "RETRIEVAL_RULE",
    "RULE",
    "RULES",
    "SAMPLING_REASONS",
    "STREAMS",
    "TENANT",
    "Baseline",
    "Calibration",
    "Ceiling",
    "DriftConfig",
    "FrozenBaselines",
    "Level",
    "Reading",
    "Silence",
    "Stream",
    "alarm_rate",
    "baseline_window",
    "calibrate",
    "compute_baselines",
    "cusum",
    "detect",
    "detector_key",
    "first_alarm",
    "freeze",
    "increments",
    "learn",
    "partitions",
    "progress_line",
    "read",
    "restart_points",
    "run_length",
    "sampling_weights",
    "silences",
    "silences_of",
    "solved",
    "summarize",
    "threshold_for",
    "thresholds",
    "weigh",
    "wilson_interval",
]
