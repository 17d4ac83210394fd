"""Sinks that stay in the process: the log (always on) and a list (tests, the demo)."""

from __future__ import annotations

import logging

from ...model import Alert, AlertGroup
from ..lifecycle import describe


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
        self.groups: list[AlertGroup] = []

    def send(self, alert: Alert) -> None:
        self.alerts.append(alert)

    def send_group(self, group: AlertGroup) -> None:
        self.groups.append(group)
        self.alerts.extend(group.alerts)
