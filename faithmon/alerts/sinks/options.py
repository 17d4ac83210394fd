"""What the sinks may be configured with (``FAITHMON_ALERT_*``); a sink whose URL or host
is empty is off."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class SinkOptions:
    webhook_url: str = ""
    webhook_secret: str = ""
    slack_url: str = ""
    alertmanager_url: str = ""
    allow_link_local: bool = False
    smtp_host: str = ""
    smtp_from: str = "faithmon@localhost"
    smtp_to: tuple[str, ...] = ()
    smtp_user: str = ""
    smtp_password: str = ""
