"""The worker's health check: judge_error when a judge's evaluations fail too often, and
ingest_error when a receiver stops saving (its heartbeat goes silent, or its saves keep
failing). Their alerts follow the same lifecycle, routes and silences as any other."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from ..alerts import Policy, deliver, to_tell
from ..alerts.health import (
    ERROR_RATE,
    INGEST_ERROR,
    JUDGE_ERROR,
    judge_error_signal,
    receiver_signals,
)
from ..model import Alert, AlertSink
from ..store import Sessions
from ..store import evaluations as store_evaluations
from ..store import receivers as store_receivers
from ._shared import reconcile_kinds

logger = logging.getLogger(__name__)

WINDOW = timedelta(hours=1)
FORGET_AFTER = timedelta(days=1)
"""A receiver not heard of for this long is forgotten (its alert, if any, resolves)."""


@dataclass(frozen=True, slots=True)
class HealthBounds:
    judge_error_rate: float = 0.2
    judge_error_min: int = 20
    receiver_stale: timedelta = timedelta(minutes=2)


def _ours(alert: Alert) -> bool:
    if alert.rule == INGEST_ERROR:
        return True
    return alert.rule == JUDGE_ERROR and alert.segment.get("cause") == ERROR_RATE


def check_health(
    sessions: Sessions,
    judge_name: str,
    bounds: HealthBounds,
    sinks: Sequence[AlertSink] = (),
    now: Callable[[], datetime] = lambda: datetime.now(UTC),
    policy: Policy | None = None,
) -> list[Alert]:
    """Update the health alerts; returns what changed (the sinks hear what is to be told)."""
    policy = policy or Policy()
    clock = now()
    with sessions() as session, session.begin():
        store_receivers.forget(session, clock - FORGET_AFTER)
        recent = store_evaluations.recent_statuses(session, judge_name, clock - WINDOW)
        statuses = store_receivers.receivers(session)
        changed = reconcile_kinds(
            session,
            [INGEST_ERROR, JUDGE_ERROR],
            _ours,
            lambda open_alerts: [
                judge_error_signal(
                    judge_name, recent, bounds.judge_error_rate, bounds.judge_error_min
                ),
                *receiver_signals(statuses, open_alerts, clock, bounds.receiver_stale),
            ],
            clock,
            policy,
        )
    for alert in changed:
        if alert.state == "firing" and alert.notified_at == clock:
            logger.error("faithmon: %s alert for %s", alert.rule, dict(alert.segment))
    deliver(sinks, to_tell(changed))
    return changed
