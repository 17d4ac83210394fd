"""Drift calibration: per-detector thresholds from the history of the rates."""

from __future__ import annotations

import logging
from datetime import UTC, datetime

from .. import drift
from ..store import alerts as store_alerts
from ..store import outcomes as store_outcomes
from ._shared import Sessions
from .drift import STREAM_OF_RULE, stored_baselines

logger = logging.getLogger(__name__)


def calibrate_drift(
    sessions: Sessions, judge_name: str, config: drift.DriftConfig, since: datetime
) -> list[drift.Calibration] | None:
    """Per-detector thresholds from the history since ``since``; None without a baseline.

    Periods when a detector's alert was firing are left out of its history.
    """
    with sessions() as session:
        stored = stored_baselines(session, judge_name)
        if stored is None:
            return None
        baselines = stored[0]
        outcomes = store_outcomes.outcomes(session, judge_name, since=since)
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
    return drift.calibrate(outcomes, baselines, config, days, excluded)
