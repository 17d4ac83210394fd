"""Prometheus Alertmanager: alerts posted to ``/api/v2/alerts`` with the segment as labels."""

from __future__ import annotations

import json
from typing import Any

from ...model import Alert, AlertGroup, AlertSink
from .. import egress
from ..lifecycle import describe
from ._http import _post
from .options import SinkOptions


class AlertmanagerSink:
    """Sends alerts to Prometheus Alertmanager (``POST /api/v2/alerts``)."""

    def __init__(
        self, url: str, attempts: int = 3, backoff: float = 0.5, allow_link_local: bool = False
    ) -> None:
        egress.check_url(url, allow_link_local)
        self.url = url.rstrip("/") + "/api/v2/alerts"
        self._attempts, self._backoff = attempts, backoff
        self._allow_link_local = allow_link_local

    def send(self, alert: Alert) -> None:
        self._post([_item(alert)])

    def send_group(self, group: AlertGroup) -> None:
        # Alertmanager takes a list: a group is one request, its own grouping regroups it.
        self._post([_item(alert) for alert in group.alerts])

    def _post(self, items: list[dict[str, Any]]) -> None:
        body = json.dumps(items).encode()
        _post(self.url, body, {}, self._attempts, self._backoff, self._allow_link_local)


def _item(alert: Alert) -> dict[str, Any]:
    labels: dict[str, str] = {
        "alertname": alert.rule,
        "severity": alert.severity,
        "source": "faithmon",
    }
    labels.update({k: str(v) for k, v in alert.segment.items()})
    annotations = {
        "summary": str(alert.details.get("summary") or describe(alert)),
        "details": json.dumps(dict(alert.details), default=str)[:4000],
    }
    # Alertmanager's own templates and receivers know these names.
    for key in ("description", "runbook_url"):
        if alert.details.get(key):
            annotations[key] = str(alert.details[key])
    item: dict[str, Any] = {
        "labels": labels,
        "annotations": annotations,
        "startsAt": alert.opened_at.isoformat(),
    }
    if alert.resolved_at is not None:
        item["endsAt"] = alert.resolved_at.isoformat()
    return item


def from_options(options: SinkOptions) -> AlertSink | None:
    if not options.alertmanager_url:
        return None
    return AlertmanagerSink(options.alertmanager_url, allow_link_local=options.allow_link_local)
