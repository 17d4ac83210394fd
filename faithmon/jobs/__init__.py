"""Worker jobs as plain functions: tests and `faithmon worker --once` call them directly,
and ``faithmon.worker`` schedules them.

- ``score_pending`` (``score.py``) leases pending records, judges them and stores evaluations;
- ``check_drift`` (``drift.py``) folds newly scored outcomes into the per-segment
  detectors (``drift_fold.py``) and updates the alerts; ``rebuild_drift`` folds them all;
- ``run_sentinels`` (``sentinels.py``) measures each judge configuration on known cases;
- ``apply_retention`` (``retention.py``) and ``calibrate_drift`` (``calibrate.py``).
"""

from ._shared import STOPPING, worker_id
from .calibrate import calibrate_drift
from .drift import DRIFT_RULES, DriftRun, check_drift, rebuild_drift
from .retention import apply_retention
from .score import JUDGE_BLOCKED_RULE, RetryPolicy, score_pending
from .sentinels import JUDGE_DRIFT_RULE, SentinelRun, run_sentinels

__all__ = [
    "DRIFT_RULES",
    "JUDGE_BLOCKED_RULE",
    "JUDGE_DRIFT_RULE",
    "STOPPING",
    "DriftRun",
    "RetryPolicy",
    "SentinelRun",
    "apply_retention",
    "calibrate_drift",
    "check_drift",
    "rebuild_drift",
    "run_sentinels",
    "score_pending",
    "worker_id",
]
