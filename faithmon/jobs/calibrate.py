"""Drift calibration: per-detector thresholds from the history of the rates."""

from __future__ import annotations

import logging
from datetime import UTC, datetime

from .. import drift
from ..store import Sessions
from ..store import alerts as store_alerts
from ..store import baselines as store_baselines
from ..store import evaluations as store_evaluations
from ..store import sampling as store_sampling
from .drift import STREAM_OF_RULE

logger = logging.getLogger(__name__)


def calibrate_drift(
    sessions: Sessions, judge_name: str, config: drift.DriftConfig, since: datetime
) -> list[drift.Calibration] | None:
    """Per-detector thresholds from the history since ``since``; None without a baseline.

    Periods when a detector's alert was firing are left out of its history.
    """
    with sessions() as session:
        frozen = store_baselines.load_baselines(session, judge_name)
        if frozen is None:
            return None
        # No alert is raised from these: the examples' evidence is not needed.
        outcomes = drift.weigh(
            store_evaluations.outcomes(session, judge_name, since=since, evidence=False),
            store_sampling.sampling_counts(session, since=since, reasons=drift.SAMPLING_REASONS),
        )
        excluded: dict[str, list[tuple[datetime, datetime]]] = {}
        for alert in store_alerts.list_alerts(session):
            stream = STREAM_OF_RULE.get(alert.rule)
            if stream is None:
                continue
            # Both ends in trace time, as the outcomes are: from the change point to
            # where the detector restarted (still open: to the end of the history).
            start, reset = alert.details.get("change_at"), alert.details.get("reset_at")
            begin = datetime.fromisoformat(start) if start else alert.opened_at
            end = datetime.fromisoformat(reset) if reset else datetime.max.replace(tzinfo=UTC)
            excluded.setdefault(drift.detector_key(stream, alert.segment), []).append((begin, end))
    # Traffic is measured over the span the history really covers.
    end = outcomes[-1].at if outcomes else datetime.now(UTC)
    first = outcomes[0].at if outcomes else since
    days = max((end - first).total_seconds() / 86400, 1 / 24)
    return drift.calibrate(outcomes, frozen.segments, config, days, excluded)
