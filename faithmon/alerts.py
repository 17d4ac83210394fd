"""Alert lifecycle (pending → firing → resolved) and sinks.

:func:`reconcile` turns detector signals into alert changes: one open alert per
(rule, segment); a signal at ``pending`` or ``firing`` opens or moves it, a
signal back at ``ok`` resolves it. An alert never goes back from firing to
pending: it stays firing until resolved. Sinks receive every change.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Sequence
from dataclasses import replace
from datetime import datetime

from .model import Alert, AlertSink, Signal, segment_key

logger = logging.getLogger(__name__)

SEVERITY = {"pending": "warning", "firing": "critical"}


def reconcile(
    open_alerts: Iterable[Alert], signals: Sequence[Signal], now: datetime
) -> list[Alert]:
    """The alerts that change because of ``signals``: new ones have ``id`` None."""
    current = {(a.rule, segment_key(a.segment)): a for a in open_alerts}
    changed: list[Alert] = []
    for signal in signals:
        alert = current.get((signal.rule, segment_key(signal.segment)))
        if alert is None:
            if signal.level == "ok":
                continue
            changed.append(
                Alert(
                    rule=signal.rule,
                    segment=dict(signal.segment),
                    state=signal.level,
                    severity=SEVERITY[signal.level],
                    opened_at=now,
                    updated_at=now,
                    details=dict(signal.details),
                )
            )
        elif signal.level == "ok":
            changed.append(
                replace(
                    alert,
                    state="resolved",
                    updated_at=now,
                    resolved_at=now,
                    details=dict(signal.details),
                )
            )
        elif signal.level == "firing" and alert.state == "pending":
            changed.append(
                replace(
                    alert,
                    state="firing",
                    severity=SEVERITY["firing"],
                    updated_at=now,
                    details=dict(signal.details),
                )
            )
        else:
            changed.append(replace(alert, updated_at=now, details=dict(signal.details)))
    return changed


def describe(alert: Alert) -> str:
    segment = segment_key(alert.segment) or "overall"
    d = alert.details
    text = f"{alert.rule} [{alert.state}] {segment}"
    if "current_rate" in d:
        text += (
            f": unsupported rate {d['current_rate']:.1%} over {d.get('records')} records"
            f" vs baseline {d['baseline_rate']:.1%}"
        )
    return text


class LogSink:
    """Logs every alert change at WARNING (firing) or INFO."""

    def __init__(self, name: str = "faithmon.alerts") -> None:
        self._logger = logging.getLogger(name)

    def send(self, alert: Alert) -> None:
        level = logging.WARNING if alert.state == "firing" else logging.INFO
        self._logger.log(level, "%s", describe(alert))


class ListSink:
    """Keeps the alerts it receives (tests, the demo's summary)."""

    def __init__(self) -> None:
        self.alerts: list[Alert] = []

    def send(self, alert: Alert) -> None:
        self.alerts.append(alert)


def deliver(sinks: Sequence[AlertSink], alerts: Iterable[Alert]) -> None:
    """Send each alert to each sink; one failing sink does not stop the others."""
    for alert in alerts:
        for sink in sinks:
            try:
                sink.send(alert)
            except Exception:
                logger.exception("faithmon: alert sink %s failed", type(sink).__name__)


def to_json(alert: Alert) -> dict[str, object]:
    return {
        "id": alert.id,
        "rule": alert.rule,
        "segment": dict(alert.segment),
        "state": alert.state,
        "severity": alert.severity,
        "opened_at": alert.opened_at.isoformat(),
        "updated_at": alert.updated_at.isoformat(),
        "resolved_at": alert.resolved_at.isoformat() if alert.resolved_at else None,
        "details": json.loads(json.dumps(alert.details, default=str)),
    }
