"""Alert sinks deliver to receivers on 127.0.0.1: signed webhook, Slack, Alertmanager."""

from __future__ import annotations

import base64
import hashlib
import hmac
import http.server
import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime

import pytest

from faithmon.alerts import ListSink, deliver
from faithmon.model import Alert
from faithmon.sinks import AlertmanagerSink, SlackSink, WebhookSink, sign

SECRET = "whsec_" + base64.b64encode(b"webhook-secret-of-the-receiver").decode()
T0 = datetime(2026, 11, 29, 9, tzinfo=UTC)
ALERT = Alert(
    id=7,
    rule="faithfulness_drift",
    segment={"model": "m2"},
    state="firing",
    severity="critical",
    opened_at=T0,
    updated_at=T0,
    details={
        "baseline_rate": 0.05,
        "current_rate": 0.4,
        "records": 80,
        "examples": [{"trace_id": "ab" * 16, "unsupported_claims": ["It arrives tomorrow."]}],
    },
)


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


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    state = Receiver()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # the stdlib names it so
            body = self.rfile.read(int(self.headers["Content-Length"]))
            headers = {k.lower(): v for k, v in self.headers.items()}
            state.received.append(Received(self.path, headers, body))
            self.send_response(state.statuses.pop(0) if state.statuses else 200)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    state.url = f"http://127.0.0.1:{server.server_address[1]}"
    yield state
    server.shutdown()
    server.server_close()


def test_webhook_is_signed_and_retried_with_one_id(receiver: Receiver) -> None:
    """A 503 is retried with the same id; the signature verifies with the shared secret."""
    receiver.statuses = [503]
    WebhookSink(receiver.url + "/hooks", SECRET, backoff=0.01).send(ALERT)
    first, second = receiver.received
    assert first.headers["webhook-id"] == second.headers["webhook-id"]
    timestamp = int(second.headers["webhook-timestamp"])
    expected = sign(SECRET, second.headers["webhook-id"], timestamp, second.body)
    assert second.headers["webhook-signature"] == expected
    key = base64.b64decode(SECRET.removeprefix("whsec_"))
    mac = hmac.new(
        key, f"{second.headers['webhook-id']}.{timestamp}.".encode() + second.body, hashlib.sha256
    ).digest()
    assert expected == "v1," + base64.b64encode(mac).decode()
    payload = json.loads(second.body)
    assert payload["type"] == "alert.firing" and payload["alert"]["segment"] == {"model": "m2"}


def test_webhook_gives_up_on_a_client_error(receiver: Receiver) -> None:
    """A 400 is not retried; deliver() logs it and the other sinks still get the alert."""
    receiver.statuses = [400, 400]
    kept = ListSink()
    deliver([WebhookSink(receiver.url, SECRET, backoff=0.01), kept], [ALERT])
    assert len(receiver.received) == 1 and kept.alerts == [ALERT]


def test_slack_message_names_segment_and_claims(receiver: Receiver) -> None:
    """Slack gets the summary line and the example trace with its unsupported claim."""
    SlackSink(receiver.url + "/services/x").send(ALERT)
    text = json.loads(receiver.received[0].body)["text"]
    assert "model=m2" in text and "It arrives tomorrow." in text


def test_alertmanager_gets_labels_and_times(receiver: Receiver) -> None:
    """Alertmanager's API gets one alert with segment labels, summary and start time."""
    AlertmanagerSink(receiver.url).send(ALERT)
    [post] = receiver.received
    assert post.path == "/api/v2/alerts"
    [item] = json.loads(post.body)
    assert item["labels"] == {
        "alertname": "faithfulness_drift",
        "severity": "critical",
        "source": "faithmon",
        "model": "m2",
    }
    assert item["startsAt"] == T0.isoformat() and "endsAt" not in item


def test_email_reaches_a_real_smtp_server() -> None:
    """An alert e-mail goes over SMTP to aiosmtpd on 127.0.0.1 with the alert in it."""
    from aiosmtpd.controller import Controller
    from aiosmtpd.handlers import Message

    from faithmon.sinks import EmailSink

    class Inbox(Message):
        def __init__(self) -> None:
            super().__init__()
            self.messages: list[object] = []

        def handle_message(self, message: object) -> None:
            self.messages.append(message)

    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    inbox = Inbox()
    controller = Controller(inbox, hostname="127.0.0.1", port=port)
    controller.start()
    try:
        EmailSink("127.0.0.1", port, "faithmon@example.org", ["oncall@example.org"]).send(ALERT)
    finally:
        controller.stop()
    [message] = inbox.messages
    assert message["To"] == "oncall@example.org"  # type: ignore[index]
    assert "model=m2" in message["Subject"]  # type: ignore[index]
    body = message.get_payload()  # type: ignore[attr-defined]
    assert "It arrives tomorrow." in body and "current_rate: 0.4" in body
