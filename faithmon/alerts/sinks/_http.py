"""What the HTTP sinks share: a POST with retries that never follows a redirect, and
the one id per alert change that every retry (and the e-mail's Message-ID) carries.

Delivery retries a few times with backoff on connection errors, 408, 429 and
5xx, then gives up with ``DeliveryError`` (``alerts.deliver`` logs it; one failing
sink never stops the others); another 4xx, or a redirect, gives up at once. Where a
sink may send is ``egress``'s job.
"""

from __future__ import annotations

import hashlib
import time
import urllib.error
import urllib.request
from collections.abc import Mapping

from ...model import Alert, AlertGroup, segment_key
from .. import egress


class DeliveryError(ConnectionError):
    """A sink's POST failed. ``status`` is the last reply's HTTP status (None: no reply);
    the message never names the URL, whose path may be a secret, so it may be shown."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


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
            status: int | None = error.code
            if 300 <= error.code < 400:
                # Following it would send the alert to a host nobody checked.
                raise DeliveryError(
                    f"HTTP {error.code}: redirects are not followed", error.code
                ) from None
            if error.code < 500 and error.code not in (408, 429):
                raise DeliveryError(f"HTTP {error.code}", error.code) from None
            cause = f"HTTP {error.code}"
        except OSError as error:
            status, cause = None, type(error).__name__
        if attempt + 1 < attempts:
            time.sleep(backoff * 2**attempt)
    raise DeliveryError(f"{cause} after {attempts} attempts", status)


def delivery_id(alert: Alert) -> str:
    """One id per alert change: the same for every retry of it."""
    text = f"{alert.id}:{alert.rule}:{segment_key(alert.segment)}:{alert.state}:{alert.updated_at}"
    return "msg_" + hashlib.sha256(text.encode()).hexdigest()[:24]


def group_delivery_id(group: AlertGroup) -> str:
    """One id per group message: the same for every retry of it."""
    text = ",".join(delivery_id(alert) for alert in group.alerts)
    return "msg_" + hashlib.sha256(f"{group.route}:{text}".encode()).hexdigest()[:24]


def group_headline(group: AlertGroup) -> str:
    """``3 alerts (2 firing, 1 resolved) for kind=faithfulness_drift,tenant=acme``."""
    states: dict[str, int] = {}
    for alert in group.alerts:
        states[alert.state] = states.get(alert.state, 0) + 1
    counts = ", ".join(f"{n} {state}" for state, n in states.items())
    where = segment_key(group.labels) or "all"
    plural = "s" if len(group.alerts) != 1 else ""
    return f"{len(group.alerts)} alert{plural} ({counts}) for {where}"
