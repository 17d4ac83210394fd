"""Drift detection: production drift per segment (pure functions over outcomes)."""

from .arl import alarm_rate, cusum, first_alarm, increments, run_length, threshold_for
from .baseline import Baseline, baseline_window, compute_baselines, segments_of, wilson_interval
from .calibrate import Calibration, calibrate
from .config import (
    CRITICAL_RULE,
    MIN_RATE,
    NO_DATA_RULE,
    RULE,
    RULES,
    STREAMS,
    DriftConfig,
    Level,
    Stream,
    detector_key,
)
from .detect import Reading, detect, restart_points, thresholds
from .silence import Silence, silences

__all__ = [
    "CRITICAL_RULE",
    "MIN_RATE",
    "NO_DATA_RULE",
    "RULE",
    "RULES",
    "STREAMS",
    "Baseline",
    "Calibration",
    "DriftConfig",
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
    "increments",
    "restart_points",
    "run_length",
    "segments_of",
    "silences",
    "threshold_for",
    "thresholds",
    "wilson_interval",
]
