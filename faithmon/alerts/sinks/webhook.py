"""Signed webhooks, per the Standard Webhooks scheme: ``webhook-id``,
``webhook-timestamp`` and ``webhook-signature: v1,<base64 HMAC-SHA256 of
"id.timestamp.body">``; the id is the same for every attempt of one alert
change, so receivers can drop repeats."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time

from ...errors import ConfigError
from ...model import Alert, AlertGroup, AlertSink
from .. import egress
from ..lifecycle import to_json
from ._http import _post, delivery_id, group_delivery_id
from .options import SinkOptions


def sign(secret: str, message_id: str, timestamp: int, body: bytes) -> str:
    """The Standard Webhooks signature header value for ``body``."""
    key = (
        base64.b64decode(secret.removeprefix("whsec_"))
        if secret.startswith("whsec_")
        else (secret.encode())
    )
    payload = f"{message_id}.{timestamp}.".encode() + body
    digest = hmac.new(key, payload, hashlib.sha256).digest()
    return "v1," + base64.b64encode(digest).decode()


class WebhookSink:
    """POSTs each alert change as JSON, signed with HMAC-SHA256."""

    def __init__(
        self,
        url: str,
        secret: str,
        attempts: int = 3,
        backoff: float = 0.5,
        allow_link_local: bool = False,
    ) -> None:
        if not secret:
            raise ValueError("a webhook sink needs a signing secret")
        egress.check_url(url, allow_link_local)
        self.url, self._secret, self._attempts, self._backoff = url, secret, attempts, backoff
        self._allow_link_local = allow_link_local

    def send(self, alert: Alert) -> None:
        body = json.dumps({"type": f"alert.{alert.state}", "alert": to_json(alert)}).encode()
        self._post(body, delivery_id(alert))

    def send_group(self, group: AlertGroup) -> None:
        """One message for a grouped route's group: each alert as ``send`` shapes it."""
        body = json.dumps(
            {
                "type": "alert.group",
                "group": {"route": group.route, "labels": dict(group.labels)},
                "alerts": [
                    {"type": f"alert.{alert.state}", "alert": to_json(alert)}
                    for alert in group.alerts
                ],
            }
        ).encode()
        self._post(body, group_delivery_id(group))

    def _post(self, body: bytes, message_id: str) -> None:
        timestamp = int(time.time())
        headers = {
            "webhook-id": message_id,
            "webhook-timestamp": str(timestamp),
            "webhook-signature": sign(self._secret, message_id, timestamp, body),
        }
        _post(self.url, body, headers, self._attempts, self._backoff, self._allow_link_local)


def from_options(options: SinkOptions) -> AlertSink | None:
    if not options.webhook_url:
        return None
    if not options.webhook_secret:
        raise ConfigError("FAITHMON_ALERT_WEBHOOK_URL needs FAITHMON_ALERT_WEBHOOK_SECRET")
    return WebhookSink(
        options.webhook_url, options.webhook_secret, allow_link_local=options.allow_link_local
    )
