"""E-mail over SMTP: one plain-text message per alert change (or per group of a grouped
route)."""

from __future__ import annotations

import smtplib
from collections.abc import Sequence
from email.message import EmailMessage

from ...errors import ConfigError
from ...model import Alert, AlertGroup, AlertSink
from .. import egress
from ..lifecycle import describe, example_words
from ._http import delivery_id, group_delivery_id, group_headline
from .options import SinkOptions


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
        allow_link_local: bool = False,
    ) -> None:
        if not recipients:
            raise ValueError("an e-mail sink needs at least one recipient")
        egress.check_host(host, allow_link_local)
        self.host, self.port, self.sender = host, port, sender
        self.recipients = list(recipients)
        self._username, self._password, self._starttls = username, password, starttls

    def send(self, alert: Alert) -> None:
        headline = str(alert.details.get("summary") or describe(alert))
        self._send(headline, delivery_id(alert), _body(alert))

    def send_group(self, group: AlertGroup) -> None:
        lines: list[str] = []
        for alert in group.alerts:
            lines.extend([*_body(alert), ""])
        self._send(group_headline(group), group_delivery_id(group), lines)

    def _send(self, headline: str, message_id: str, lines: list[str]) -> None:
        message = EmailMessage()
        message["Subject"] = f"[faithmon] {' '.join(headline.split())}"[:200]
        message["From"] = self.sender
        message["To"] = ", ".join(self.recipients)
        message["Message-ID"] = f"<{message_id}@faithmon>"
        message.set_content("\n".join(lines))
        with smtplib.SMTP(self.host, self.port, timeout=10) as smtp:
            if self._starttls:
                smtp.starttls()
            if self._username:
                smtp.login(self._username, self._password)
            smtp.send_message(message)


def _body(alert: Alert) -> list[str]:
    lines = [describe(alert), ""]
    for key, value in alert.details.items():
        if key != "examples":
            lines.append(f"{key}: {value}")
    for example in alert.details.get("examples", [])[:3]:
        lines.append(f"trace {example['trace_id']}: {example_words(example)}")
    return lines


def from_options(options: SinkOptions) -> AlertSink | None:
    if not options.smtp_host:
        return None
    if not options.smtp_to:
        raise ConfigError("FAITHMON_ALERT_SMTP_HOST needs FAITHMON_ALERT_SMTP_TO")
    host, _, port = options.smtp_host.partition(":")
    try:
        number = int(port or 25)
    except ValueError:
        raise ConfigError(f"FAITHMON_ALERT_SMTP_HOST: port {port!r} is not a number") from None
    return EmailSink(
        host,
        number,
        options.smtp_from,
        options.smtp_to,
        options.smtp_user,
        options.smtp_password,
        starttls=bool(options.smtp_user),
        allow_link_local=options.allow_link_local,
    )
