"""Slack incoming webhooks: one message per alert change (or per group of a grouped route),
with a few examples."""

from __future__ import annotations

import json

from ...model import Alert, AlertGroup, AlertSink
from .. import egress
from ..lifecycle import describe, example_words
from ._http import _post, group_headline
from .options import SinkOptions


class SlackSink:
    """Posts each alert change to a Slack incoming webhook."""

    def __init__(
        self, url: str, attempts: int = 3, backoff: float = 0.5, allow_link_local: bool = False
    ) -> None:
        egress.check_url(url, allow_link_local)
        self.url, self._attempts, self._backoff = url, attempts, backoff
        self._allow_link_local = allow_link_local

    def send(self, alert: Alert) -> None:
        self._post(_lines(alert))

    def send_group(self, group: AlertGroup) -> None:
        lines = [f"*faithmon: {group_headline(group)}*"]
        for alert in group.alerts:
            lines.extend(["", *_lines(alert)])
        self._post(lines)

    def _post(self, lines: list[str]) -> None:
        body = json.dumps({"text": "\n".join(lines)}).encode()
        _post(self.url, body, {}, self._attempts, self._backoff, self._allow_link_local)


def _lines(alert: Alert) -> list[str]:
    # A rules file's summary, description and runbook (alerts.routing) lead the message.
    lines = [f"*{alert.details.get('summary') or describe(alert)}*"]
    if alert.details.get("description"):
        lines.append(str(alert.details["description"]))
    if alert.details.get("runbook_url"):
        lines.append(f"Runbook: {alert.details['runbook_url']}")
    for example in alert.details.get("examples", [])[:3]:
        lines.append(f"• trace `{example['trace_id']}`: {example_words(example)}")
    return lines


def from_options(options: SinkOptions) -> AlertSink | None:
    if not options.slack_url:
        return None
    return SlackSink(options.slack_url, allow_link_local=options.allow_link_local)
