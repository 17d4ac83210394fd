"""Alert sinks that leave the process: signed webhooks, Slack, Alertmanager, e-mail.

Each is a small class with ``send(alert)``; delivery retries a few times with
backoff on connection errors and 5xx, then logs and gives up (one failing sink
never stops the others: ``alerts.deliver`` sees to that). Webhooks follow the
Standard Webhooks scheme: ``webhook-id``, ``webhook-timestamp`` and
``webhook-signature: v1,<base64 HMAC-SHA256 of "id.timestamp.body">``; the id is
the same for every attempt of one alert change, so receivers can drop repeats.

Where the HTTP sinks may send is ``egress``'s job: each URL is checked when its
sink is built, each connection's addresses when it opens, and a redirect is a
failed delivery, never followed.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import logging
import smtplib
import time
import urllib.error
import urllib.request
from collections.abc import Mapping, Sequence
from email.message import EmailMessage
from typing import Any

from ..model import Alert, segment_key
from . import egress
from .lifecycle import describe, to_json

logger = logging.getLogger(__name__)


def _post(
    url: str,
    body: bytes,
    headers: Mapping[str, str],
    attempts: int,
    backoff: float,
    allow_link_local: bool = False,
) -> None:
    opener = egress.opener(allow_link_local)
    for attempt in range(attempts):
        request = urllib.request.Request(
            url, data=body, method="POST", headers={"Content-Type": "application/json", **headers}
        )
        try:
            with opener.open(request, timeout=10) as response:
                response.read()
                return
        except urllib.error.HTTPError as error:
            if 300 <= error.code < 400:
                # Following it would send the alert to a host nobody checked.
                raise ConnectionError(f"HTTP {error.code}: redirects are not followed") from None
            if error.code < 500 and error.code not in (408, 429):
                raise
            cause = f"HTTP {error.code}"
        except OSError as error:
            cause = type(error).__name__
        if attempt + 1 < attempts:
            time.sleep(backoff * 2**attempt)
    raise ConnectionError(f"{attempts} attempts failed; last: {cause}")


def delivery_id(alert: Alert) -> str:
    """One id per alert change: the same for every retry of it."""
    text = f"{alert.id}:{alert.rule}:{segment_key(alert.segment)}:{alert.state}:{alert.updated_at}"
    return "msg_" + hashlib.sha256(text.encode()).hexdigest()[:24]


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
        message_id = delivery_id(alert)
        timestamp = int(time.time())
        headers = {
            "webhook-id": message_id,
            "webhook-timestamp": str(timestamp),
            "webhook-signature": sign(self._secret, message_id, timestamp, body),
        }
        _post(self.url, body, headers, self._attempts, self._backoff, self._allow_link_local)


class SlackSink:
    """Posts each alert change to a Slack incoming webhook."""

    def __init__(
        self, url: str, attempts: int = 3, backoff: float = 0.5, allow_link_local: bool = False
    ) -> None:
        egress.check_url(url, allow_link_local)
        self.url, self._attempts, self._backoff = url, attempts, backoff
        self._allow_link_local = allow_link_local

    def send(self, alert: Alert) -> None:
        lines = [f"*{describe(alert)}*"]
        for example in alert.details.get("examples", [])[:3]:
            claims = "; ".join(example.get("unsupported_claims", []))
            lines.append(f"• trace `{example['trace_id']}`: {claims}")
        body = json.dumps({"text": "\n".join(lines)}).encode()
        _post(self.url, body, {}, self._attempts, self._backoff, self._allow_link_local)


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
        labels: dict[str, str] = {
            "alertname": alert.rule,
            "severity": alert.severity,
            "source": "faithmon",
        }
        labels.update({k: str(v) for k, v in alert.segment.items()})
        item: dict[str, Any] = {
            "labels": labels,
            "annotations": {
                "summary": describe(alert),
                "details": json.dumps(dict(alert.details), default=str)[:4000],
            },
            "startsAt": alert.opened_at.isoformat(),
        }
        if alert.resolved_at is not None:
            item["endsAt"] = alert.resolved_at.isoformat()
        body = json.dumps([item]).encode()
        _post(self.url, body, {}, self._attempts, self._backoff, self._allow_link_local)


class EmailSink:
    """Sends each alert change as a plain-text e-mail over SMTP (STARTTLS when asked)."""

    def __init__(
        self,
        host: str,
        port: int,
        sender: str,
        recipients: Sequence[str],
        username: str = "",
        password: str = "",
        starttls: bool = False,
    ) -> None:
        if not recipients:
            raise ValueError("an e-mail sink needs at least one recipient")
        self.host, self.port, self.sender = host, port, sender
        self.recipients = list(recipients)
        self._username, self._password, self._starttls = username, password, starttls

    def send(self, alert: Alert) -> None:
        message = EmailMessage()
        message["Subject"] = f"[faithmon] {describe(alert)}"[:200]
        message["From"] = self.sender
        message["To"] = ", ".join(self.recipients)
        message["Message-ID"] = f"<{delivery_id(alert)}@faithmon>"
        lines = [describe(alert), ""]
        for key, value in alert.details.items():
            if key != "examples":
                lines.append(f"{key}: {value}")
        for example in alert.details.get("examples", [])[:3]:
            claims = "; ".join(example.get("unsupported_claims", []))
            lines.append(f"trace {example['trace_id']}: {claims}")
        message.set_content("\n".join(lines))
        with smtplib.SMTP(self.host, self.port, timeout=10) as smtp:
            if self._starttls:
                smtp.starttls()
            if self._username:
                smtp.login(self._username, self._password)
            smtp.send_message(message)
