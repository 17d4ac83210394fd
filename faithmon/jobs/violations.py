"""The policy check: ``policy_violation`` per segment when the judge's evaluations of the last
window carry policy findings (see :mod:`faithmon.alerts.violations`); it resolves once a
window passes without any. Run with the drift job, on drift's segments and partitions."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta

from ..alerts import Policy, deliver, to_tell
from ..alerts.violations import RULE, violation_signals
from ..drift import DriftConfig
from ..model import Alert, AlertSink
from ..store import Sessions
from ..store import policy as store_policy
from ._shared import reconcile_kinds

logger = logging.getLogger(__name__)

WINDOW = timedelta(hours=1)
"""Evaluations made this recently count; an alert resolves a window after the last finding."""


def check_policy(
    sessions: Sessions,
    judge_name: str,
    config: DriftConfig,
    sinks: Sequence[AlertSink] = (),
    now: Callable[[], datetime] = lambda: datetime.now(UTC),
    policy: Policy | None = None,
    window: timedelta = WINDOW,
) -> list[Alert]:
    """Raise or resolve ``policy_violation`` per segment; returns what changed (the sinks
    hear what is to be told). The findings are deterministic rules, not the judge's
    verdicts, so an unproven judge holds none of these back."""
    policy = policy or Policy()
    clock = now()
    with sessions() as session, session.begin():
        found = store_policy.policy_findings(
            session, judge_name, clock - window, config.dimensions, config.partition
        )
        changed = reconcile_kinds(
            session,
            [RULE],
            lambda _: True,
            lambda open_alerts: violation_signals(found, open_alerts, window),
            clock,
            policy,
        )
    for alert in changed:
        if alert.state == "firing" and alert.notified_at == clock:
            # Ids and counts only: a finding is an excerpt of an answer, and a segment's
            # labels (a tenant's name) come from the records.
            logger.warning(
                "faithmon: policy_violation alert #%s: findings in %d evaluations",
                alert.id,
                int(alert.details.get("with_findings", 0)),
            )
    deliver(sinks, to_tell(changed))
    return changed
