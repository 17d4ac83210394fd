"""Every alert sink, found through ``SINKS``: adding a sink is one module (a class with
``send(alert)`` and a ``from_options`` that builds it, or None when it is off)
plus one entry here.

The HTTP sinks check their URL with ``egress`` when built; a URL they may not
use is refused as one ConfigError line naming the setting, never the URL (a
Slack or webhook URL's path is a secret).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from ...errors import ConfigError
from ...model import AlertSink
from ..egress import RefusedAddress, RefusedDestination
from . import alertmanager, email, slack, webhook
from ._http import DeliveryError, delivery_id
from .alertmanager import AlertmanagerSink
from .email import EmailSink
from .log import ListSink, LogSink
from .options import SinkOptions
from .slack import SlackSink
from .webhook import WebhookSink, sign


@dataclass(frozen=True, slots=True)
class SinkKind:
    setting: str
    """The variable that turns the sink on (named in errors)."""
    build: Callable[[SinkOptions], AlertSink | None]


SINKS: Mapping[str, SinkKind] = {
    "webhook": SinkKind("FAITHMON_ALERT_WEBHOOK_URL", webhook.from_options),
    "slack": SinkKind("FAITHMON_ALERT_SLACK_URL", slack.from_options),
    "alertmanager": SinkKind("FAITHMON_ALERT_ALERTMANAGER_URL", alertmanager.from_options),
    "email": SinkKind("FAITHMON_ALERT_SMTP_HOST", email.from_options),
}


def make_sinks(options: SinkOptions) -> list[AlertSink]:
    """The log sink, plus every sink the options turn on."""
    sinks: list[AlertSink] = [LogSink()]
    for kind in SINKS.values():
        try:
            sink = kind.build(options)
        except RefusedAddress as exc:
            hint = "FAITHMON_ALERT_ALLOW_LINK_LOCAL=true allows it"
            raise ConfigError(f"{kind.setting}: {exc} ({hint})") from None
        except RefusedDestination as exc:
            raise ConfigError(f"{kind.setting}: {exc}") from None
        if sink is not None:
            sinks.append(sink)
    return sinks


__all__ = [
    "SINKS",
    "AlertmanagerSink",
    "DeliveryError",
    "EmailSink",
    "ListSink",
    "LogSink",
    "SinkKind",
    "SinkOptions",
    "SlackSink",
    "WebhookSink",
    "delivery_id",
    "make_sinks",
    "sign",
]
