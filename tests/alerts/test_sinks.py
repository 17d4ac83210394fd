"""Alert sinks deliver to receivers on 127.0.0.1: signed webhook, Slack, Alertmanager.

They also refuse what would send alerts out by a side door: redirects, schemes
other than http(s), link-local and cloud metadata addresses.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import logging
import re
import socket
from collections.abc import Callable, Iterator

import pytest
from click.testing import CliRunner

from faithmon.alerts import ListSink, deliver
from faithmon.alerts.egress import RefusedAddress
from faithmon.alerts.sinks import AlertmanagerSink, SlackSink, WebhookSink, sign
from faithmon.cli import main, wiring
from faithmon.config import Settings
from faithmon.errors import ConfigError
from faithmon.model import Alert
from tests.alerts.factory import SECRET, Receiver, serving
from tests.timing import days_ago

T0 = days_ago(2, hour=9)
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


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    with serving() as state:
        yield state


@pytest.fixture
def elsewhere() -> Iterator[Receiver]:
    """A second receiver, on another loopback port, that a redirect points to."""
    with serving() as state:
        yield state


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
    from faithmon.alerts.sinks import EmailSink
    from tests.alerts.smtp import smtp_inbox

    with smtp_inbox() as inbox:
        sink = EmailSink("127.0.0.1", inbox.port, "faithmon@example.org", ["oncall@example.org"])
        sink.send(ALERT)
    [message] = inbox.messages
    assert message["To"] == "oncall@example.org"  # type: ignore[index]
    assert "model=m2" in message["Subject"]  # type: ignore[index]
    body = message.get_payload()  # type: ignore[attr-defined]
    assert "It arrives tomorrow." in body and "current_rate: 0.4" in body


Sender = Callable[[str], object]
SENDERS: dict[str, Sender] = {
    "webhook": lambda url: WebhookSink(url, SECRET, backoff=0.01).send(ALERT),
    "slack": lambda url: SlackSink(url, backoff=0.01).send(ALERT),
    "alertmanager": lambda url: AlertmanagerSink(url, backoff=0.01).send(ALERT),
}


@pytest.mark.parametrize("status", [301, 302, 307, 308])
@pytest.mark.parametrize("kind", sorted(SENDERS))
def test_a_redirect_is_a_failure_and_not_followed(
    receiver: Receiver, elsewhere: Receiver, kind: str, status: int
) -> None:
    """A 3xx to another loopback port fails the delivery at once; nothing reaches it."""
    receiver.statuses = [status, status, status]
    receiver.location = elsewhere.url + "/stolen"

    with pytest.raises(ConnectionError, match=f"HTTP {status}: redirects are not followed"):
        SENDERS[kind](receiver.url)

    assert len(receiver.received) == 1  # not retried either: the answer will not change
    assert elsewhere.received == []


def test_deliver_counts_a_redirect_as_a_failed_sink(
    receiver: Receiver, elsewhere: Receiver, caplog: pytest.LogCaptureFixture
) -> None:
    """deliver() logs the redirected sink as failed and goes on to the next sink."""
    receiver.statuses = [302]
    receiver.location = elsewhere.url
    kept = ListSink()

    with caplog.at_level(logging.ERROR, logger="faithmon.alerts"):
        deliver([SlackSink(receiver.url), kept], [ALERT])

    assert "alert sink SlackSink failed" in caplog.text
    assert elsewhere.received == [] and kept.alerts == [ALERT]


def settings(**environ: str) -> Settings:
    return Settings.from_env({"FAITHMON_DATABASE_URL": "sqlite://", **environ})


BAD_URLS = {
    "ftp://alerts.example/hook": "scheme 'ftp'; only http and https URLs are allowed",
    "file:///etc/passwd": "scheme 'file'; only http and https URLs are allowed",
    "alerts.example/hook": "no scheme; only http and https URLs are allowed",
    "http:///hook": "the URL has no host",
    "http://[::1/hook": "not a URL (Invalid IPv6 URL)",
    "http://alerts.example:99999/": "not a URL (Port out of range 0-65535)",
    "http://alerts.example/a b": "the URL contains spaces or control characters",
    "http://169.254.169.254@alerts.example/": "user names and passwords in the URL",
    "http://169.254.169.254/latest/meta-data/": "169.254.169.254 is a cloud metadata address",
    "http://[fd00:ec2::254]/": "fd00:ec2::254 is a cloud metadata address",
    "http://100.100.100.200/": "100.100.100.200 is a cloud metadata address",
    "http://metadata.google.internal/computeMetadata/v1/": "is a cloud metadata host",
    "http://169.254.10.20:9093": "169.254.10.20 is a link-local address",
    "http://[fe80::1]:9093": "fe80::1 is a link-local address",
}


@pytest.mark.parametrize("setting", ["SLACK", "WEBHOOK", "ALERTMANAGER"])
@pytest.mark.parametrize("url", sorted(BAD_URLS))
def test_a_bad_sink_url_is_one_config_error_naming_the_setting(url: str, setting: str) -> None:
    """Building the sinks refuses the URL with the setting's name and the problem."""
    name = f"FAITHMON_ALERT_{setting}_URL"
    with pytest.raises(ConfigError) as caught:
        wiring.make_sinks(settings(**{name: url, "FAITHMON_ALERT_WEBHOOK_SECRET": SECRET}))

    message = str(caught.value)
    assert message.startswith(f"{name}: ") and BAD_URLS[url] in message
    assert "\n" not in message


@pytest.mark.parametrize(
    "url",
    [
        "http://169.254.169.254/latest/meta-data/",
        "ftp://alerts.example/secret-path-token",
        "https:///secret-path-token",
        "https://[fe80::2]/T000/B000/secret-path-token",
    ],
)
def test_the_worker_does_not_start_on_a_bad_sink_url(
    url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`faithmon worker` stops with one line naming the setting, and never the URL's path."""
    monkeypatch.setenv("FAITHMON_DATABASE_URL", "sqlite://")
    monkeypatch.setenv("FAITHMON_ALERT_SLACK_URL", url)

    result = CliRunner().invoke(main, ["worker", "--once"])

    assert result.exit_code == 1
    assert result.stdout == ""
    [line] = result.stderr.splitlines()
    assert line.startswith("Error: FAITHMON_ALERT_SLACK_URL: ")
    assert "meta-data" not in line and "secret-path-token" not in line


def test_link_local_is_allowed_when_asked() -> None:
    """FAITHMON_ALERT_ALLOW_LINK_LOCAL=true lets a link-local or metadata URL through."""
    sinks = wiring.make_sinks(
        settings(
            FAITHMON_ALERT_SLACK_URL="http://169.254.169.254/hook",
            FAITHMON_ALERT_ALERTMANAGER_URL="http://[fe80::1]:9093",
            FAITHMON_ALERT_ALLOW_LINK_LOCAL="true",
        )
    )
    assert [type(s).__name__ for s in sinks] == ["LogSink", "SlackSink", "AlertmanagerSink"]


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:9093",
        "http://localhost:9093",
        "http://10.0.0.5:9093",
        "http://192.168.1.10:9093",
        "http://alertmanager.monitoring.svc.cluster.local:9093",
        "https://hooks.slack.com/services/T000/B000/XXXX",
    ],
)
def test_loopback_private_and_cluster_urls_stay_allowed(url: str) -> None:
    """Alertmanager usually lives inside the cluster: internal addresses are fine."""
    sinks = wiring.make_sinks(settings(FAITHMON_ALERT_ALERTMANAGER_URL=url))
    assert [type(s).__name__ for s in sinks] == ["LogSink", "AlertmanagerSink"]


@pytest.fixture
def dns(monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """Names mapped to the address the resolver gives for them; other names resolve as usual."""
    answers: dict[str, str] = {}
    real = socket.getaddrinfo

    def getaddrinfo(host: str, port: object, *args: object, **kwargs: object) -> object:
        return real(answers.get(host, host), port, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    return answers


def test_a_name_resolving_to_a_metadata_address_is_refused_at_send(
    dns: dict[str, str], receiver: Receiver
) -> None:
    """A name that passed at start but resolves to 169.254.169.254 when sending is refused."""
    dns["alerts.example"] = "127.0.0.1"
    port = receiver.url.rsplit(":", 1)[1]
    sink = SlackSink(f"http://alerts.example:{port}/hook", backoff=0.01)
    sink.send(ALERT)  # resolves to loopback: delivered
    assert len(receiver.received) == 1

    dns["alerts.example"] = "169.254.169.254"  # the record changes under us
    with pytest.raises(
        RefusedAddress, match=re.escape("alerts.example resolves to 169.254.169.254")
    ):
        sink.send(ALERT)
    assert len(receiver.received) == 1
