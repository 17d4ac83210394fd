"""Shared alert-test helpers: a receiver on 127.0.0.1, the routed ALERT, a GOOD rules file."""

from __future__ import annotations

import base64
import http.server
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from faithmon.model import Alert
from tests.timing import days_ago

SECRET = "whsec_" + base64.b64encode(b"webhook-secret-of-the-receiver").decode()


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: bytes


@dataclass
class Receiver:
    statuses: list[int] = field(default_factory=list)
    received: list[Received] = field(default_factory=list)
    url: str = ""
    location: str = ""
    """Sent as the Location header of a 3xx answer."""


@contextmanager
def serving() -> Iterator[Receiver]:
    state = Receiver()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # the stdlib names it so
            body = self.rfile.read(int(self.headers["Content-Length"]))
            headers = {k.lower(): v for k, v in self.headers.items()}
            state.received.append(Received(self.path, headers, body))
            status = state.statuses.pop(0) if state.statuses else 200
            self.send_response(status)
            if 300 <= status < 400 and state.location:
                self.send_header("Location", state.location)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    state.url = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()


_OPENED = days_ago(1, hour=9)
# What the routing and group tests send.
ALERT = Alert(
    id=3,
    rule="faithfulness_drift",
    segment={"tenant": "acme", "model": "gpt-4o", "route": "/ask"},
    state="firing",
    severity="warning",
    opened_at=_OPENED,
    updated_at=_OPENED,
    details={
        "stream": "unsupported",
        "baseline_rate": 0.05,
        "baseline_interval": [0.04, 0.06],
        "current_rate": 0.31,
        "current_interval": [0.22, 0.41],
        "records": 80,
        "statistic": 9.2,
        "threshold": 8.0,
        "examples": [{"trace_id": "ab" * 16, "unsupported_claims": ["It ships today."]}],
    },
)


GOOD = """
[sinks.oncall]
type = "webhook"
url = "https://hooks.example.com/faithmon"
secret_env = "ONCALL_SECRET"

[sinks.mail]
type = "email"
host = "smtp.example.com"
port = 587
from = "faithmon@example.com"
to = ["oncall@example.com"]
user = "faithmon"
password_env = "SMTP_PASSWORD"

[sinks.log]
type = "log"

[[routes]]
match = ["tenant=~acme|globex", "severity!=info"]
sinks = ["oncall", "mail"]
continue = true
group_by = ["kind", "tenant"]
group_wait = "30s"
group_interval = "5m"
repeat_interval = "4h"

[[routes]]
sinks = ["log"]

[rules.faithfulness_drift]
for = "10m"
keep_firing_for = "1d"
severity = "critical"
runbook_url = "https://runbooks.example.com/faithfulness"
summary = "{{ segment }}: {{ current.rate }} vs {{ baseline.rate }}"
description = "{{ current.records }} records, {{ current.interval[0] }}..{{ current.interval[1] }}"

[rules.judge_drift]
summary = "judge {{ labels.judge }} {{ details.direction }}: error {{ current.rate }}"

[rules.no_data]
summary = "{{ segment }} silent for {{ details.silent_hours }} h"
"""
