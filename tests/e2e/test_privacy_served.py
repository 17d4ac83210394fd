"""No raw PII leaves faithmon by what it serves: alerts, their sinks, the report, the API.

``test_privacy`` proves the store, the logs and the judge requests hold pseudonyms only.
Here the same Faker corpus (every pattern entity, a person's name and a street address)
goes over OTLP to `faithmon serve` with API keys required; one model's answers then add
claims the chunks do not support, each naming the customer, the address and a value of
every other family. The offline judge scores them and one drift run fires with example
traces. Then the leak hunt: the alert rows, what the webhook, Slack, Alertmanager, e-mail
and log sinks receive, the HTML report, every read API response and dashboard page, the
CLI's alert and trace lists, and the server's and worker's logs. Each place that shows
content must show the pseudonyms of what it shows, so nothing passes by showing nothing.
"""

from __future__ import annotations

import contextlib
import html
import json
import logging
import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from email import message_from_bytes, policy
from email.message import EmailMessage
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote

import pytest
from sqlalchemy import func, select

import faithmon_instrumentation as fm
from faithmon.api.keys import key_hash, new_key
from faithmon.cli import wiring
from faithmon.config import Settings
from faithmon.jobs import check_drift, run_sentinels, score_pending
from faithmon.judge import OfflineJudge
from faithmon.model import Alert
from faithmon.store import engine as store_engine
from faithmon.store import keys as store_keys
from faithmon.store.tables import Base
from tests.alerts.factory import SECRET, Receiver, serving
from tests.api.client import call, every_page, get
from tests.e2e.helpers import faithmon, free_port, wait_until_healthy
from tests.e2e.pii import corpus, variants
from tests.timing import wait_for

# The dialect is not the point here: PostgreSQL runs in the second_backend tier.
pytestmark = pytest.mark.one_backend

CUSTOMERS = 30
"""``test_privacy``'s corpus size: the values its ingest leak hunt proves are scrubbed."""
SENT = [(n, False) for n in range(CUSTOMERS)] + [(n, True) for n in range(10, CUSTOMERS)]
"""(customer, bad): model m1 answers every customer, then m2 answers the last 20 badly."""
FIELDS = (
    *("email", "phone", "card", "iban", "ssn", "ip", "secret"),
    *("name", "surname", "street", "city"),
)
"""The raw values ``corpus`` lists for each customer, in its order."""
EVERY = (
    *("<PERSON_", "<ADDRESS_", "<EMAIL_", "<PHONE_", "<CARD_", "<IBAN_", "<SSN_", "<IP_"),
    "<SECRET_",
)
"""The pseudonyms of every family: what m2's unsupported claims hold once scrubbed."""
QUESTION = ("<PERSON_", "<ADDRESS_", "<EMAIL_", "<SSN_")
"""What a question holds: the lists show it, not the answer."""
CONTRADICTED: tuple[str, ...] = ()
"""What /documents shows of the answers: their contradicted claims. The refund claim (99.00
euros, not 12.50) is unsupported, not contradicted: it was read as contradicted (or
supported) only when a pseudonym's hash lent it digits, which depended on the scrub key.
The leak hunt still covers /documents and its API."""
SHOWN = {
    **dict.fromkeys(("alert rows", "webhook", "slack", "alertmanager", "e-mail"), EVERY),
    **dict.fromkeys(("report", "api trace", "api alerts", "api alert", "cli alerts"), EVERY),
    **dict.fromkeys(("page /alerts", "page /traces/{id}", "cli traces"), EVERY),
    **dict.fromkeys(("api traces", "page /traces", "page /segments/{segment}"), QUESTION),
    **dict.fromkeys(("api documents", "page /documents"), CONTRADICTED),
}
"""Where the content is shown, and the pseudonyms each place must show of it."""
PAGES = ("/", "/alerts", "/traces", "/documents", "/segments", "/sentinels", "/judges")


@dataclass
class Keys:
    admin: str
    ingest: str


@dataclass
class Inbox:
    """What the SMTP server on loopback received."""

    port: int
    messages: list[EmailMessage]


def values_of(raw: list[str], n: int) -> dict[str, str]:
    """Record ``n``'s raw values by family, from the flat list ``corpus`` returns."""
    return dict(zip(FIELDS, raw[len(FIELDS) * n : len(FIELDS) * (n + 1)], strict=True))


def answer(record: dict[str, Any], values: dict[str, str], n: int, bad: bool) -> str:
    """The corpus answer (a courtesy the judge finds no claim in) with two claims the
    chunks support; a bad one adds three they do not, naming every family between them."""
    good = (
        f"{record['answer']} Order A{n}7 cost 12.50 euros and ships within 30 days. "
        f"Account holder {values['email']} pays by card {values['card']}."
    )
    if not bad:
        return good
    address = record["question"].split(" reach ")[1].rstrip("?")
    assert values["street"] in address and values["city"] in address
    return (
        f"{good} {values['name']} at {address} was refunded 99.00 euros on card "
        f"{values['card']} and IBAN {values['iban']} today. Our courier phones "
        f"{values['phone']} tomorrow and mails {values['email']} a 15 euro voucher. "
        f"We confirmed SSN {values['ssn']} from {values['ip']} with key {values['secret']} "
        "yesterday."
    )


@pytest.fixture
def keys(database_url: str) -> Keys:
    """An admin and an ingest key, in the store before the server starts (so it never
    serves a moment without them)."""
    engine = store_engine.make_engine(database_url)
    store_engine.upgrade(engine)
    made = {}
    with store_engine.session_factory(engine).begin() as session:
        for scope in ("admin", "ingest"):
            key, prefix = new_key()
            store_keys.create_key(session, prefix, key_hash(key), [scope], name=scope)
            made[scope] = key
    engine.dispose()
    return Keys(**made)


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    """Webhook, Slack and Alertmanager posts, on one loopback port."""
    with serving() as state:
        yield state


@pytest.fixture
def inbox() -> Iterator[Inbox]:
    """An SMTP server on loopback for the e-mail sink (aiosmtpd, as ``test_sinks`` uses)."""
    from aiosmtpd.controller import Controller

    got = Inbox(free_port(), [])

    class Handler:
        async def handle_DATA(self, server: object, session: object, envelope: Any) -> str:
            parsed = message_from_bytes(envelope.content, policy=policy.default)
            assert isinstance(parsed, EmailMessage)
            got.messages.append(parsed)
            return "250 OK"

    controller = Controller(Handler(), hostname="127.0.0.1", port=got.port)
    controller.start()
    try:
        yield got
    finally:
        controller.stop()


@pytest.fixture
def served_env(env: dict[str, str], keys: Keys, receiver: Receiver, inbox: Inbox) -> dict[str, str]:
    """The e2e settings with keys required and every alert sink on, all on loopback."""
    return {
        **env,
        "FAITHMON_AUTH": "required",
        "FAITHMON_ALERT_WEBHOOK_URL": receiver.url + "/hooks/faithmon",
        "FAITHMON_ALERT_WEBHOOK_SECRET": SECRET,
        "FAITHMON_ALERT_SLACK_URL": receiver.url + "/services/slack",
        "FAITHMON_ALERT_ALERTMANAGER_URL": receiver.url,
        "FAITHMON_ALERT_SMTP_HOST": f"127.0.0.1:{inbox.port}",
        "FAITHMON_ALERT_SMTP_TO": "oncall@example.org",
    }


@pytest.fixture
def served(served_env: dict[str, str]) -> Iterator[tuple[str, subprocess.Popen[str]]]:
    """`faithmon serve`: ingest, the read API and the dashboard in one process."""
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "faithmon", "serve", "--port", str(port), "--grpc-port", "0"],
        env=served_env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until_healthy(url, process)
        yield url, process
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()


def readable(payload: Any) -> str:
    """JSON as a reader sees it: ``\\u`` escapes read (an accented name stays findable)."""
    return json.dumps(payload, ensure_ascii=False)


def views(text: str) -> list[str]:
    """The text as served, and as a reader sees it: HTML entities and URL escapes undone,
    a JSON document's ``\\u`` escapes read."""
    found = [text, html.unescape(text), unquote(html.unescape(text))]
    with contextlib.suppress(ValueError):
        found.append(readable(json.loads(text)))
    return found


def leaks(haystacks: dict[str, str], raw_values: list[str]) -> list[tuple[str, str]]:
    """(place, value) for every raw value, in any of its forms, found in a place.

    A value of letters only (a surname, a city) must stand as a word: "Hall" is in
    "shall" without being the customer's name."""
    forms = {form: value for value in raw_values for form in variants(value)}
    words = {
        form: re.compile(rf"(?<!\w){re.escape(form)}(?!\w)")
        for form in forms
        if re.fullmatch(r"[A-Za-z][A-Za-z .'-]*", form)
    }
    found = set()
    for place, text in haystacks.items():
        for view in views(text):
            for form, value in forms.items():
                # A substring test first: a regular expression per form is 100 times slower.
                if form in view and (form not in words or words[form].search(view)):
                    found.add((place, value))
    return sorted(found)


def missing(text: str, tokens: tuple[str, ...]) -> list[str]:
    """The pseudonym kinds of ``tokens`` that ``text``, as a reader sees it, lacks."""
    seen = "\n".join(views(text))
    return [t for t in tokens if t not in seen]


def send_traffic(url: str, key: str) -> list[str]:
    """Every customer asked by m1, then twenty by m2; the raw values to hunt for."""
    records, raw_values = corpus(CUSTOMERS)
    assert len(raw_values) == len(FIELDS) * len(records)
    fm.setup(endpoint=url, service_name="privacy-app", api_key=key)
    try:
        for n, bad in SENT:
            record = records[n]
            chunks = [{"id": f"kb/{i}", "text": t} for i, t in enumerate(record["chunks"])]
            with fm.rag_span(record["question"], route=("billing", "search")[n % 2]) as rag:
                rag.record_retrieval(chunks)
                said = answer(record, values_of(raw_values, n), n, bad)
                rag.record_answer(said, model="m2" if bad else "m1")
        assert fm.flush()
    finally:
        fm.shutdown()
    return raw_values


def work(settings: Settings) -> tuple[list[Alert], list[str]]:
    """What one `faithmon worker` round does, in-process: sentinels, scoring, drift with
    every sink of the settings. The alerts that fired with examples, and the alert rows."""
    engine = store_engine.make_engine(settings.database_url)
    sessions = store_engine.session_factory(engine)
    records, alerts = Base.metadata.tables["records"], Base.metadata.tables["alerts"]
    try:

        def all_stored() -> bool:
            with engine.connect() as connection:
                count = connection.execute(select(func.count()).select_from(records)).scalar()
                return count == len(SENT)

        wait_for(all_stored, 30, "the server to store every trace")
        judge = OfflineJudge()
        sinks = wiring.make_sinks(settings)
        run_sentinels(sessions, judge, sinks=sinks)
        assert score_pending(sessions, judge) == len(SENT)
        config, policy = wiring.drift_config(settings), wiring.alert_policy(settings)
        run = check_drift(sessions, judge.name, config, sinks=sinks, policy=policy)
        with engine.connect() as connection:
            rows = [repr(tuple(row)) for row in connection.execute(select(alerts))]
    finally:
        engine.dispose()
    fired = [a for a in run.changed if a.state == "firing" and a.details.get("examples")]
    return fired, rows


def read_everything(url: str, key: str) -> dict[str, str]:
    """Every read API response and dashboard page, as an admin reads them."""

    def api(path: str) -> Any:
        return get(url, path, key)

    def page(path: str) -> str:
        status, body, headers = call(url, path, key)
        assert status == 200 and headers["content-type"].startswith("text/html"), (path, status)
        return str(body)

    traces = every_page(url, "/api/v1/traces", key, 20)
    assert len(traces) == len(SENT)
    alerts = every_page(url, "/api/v1/alerts", key, 20)
    segments = api("/api/v1/segments")
    named = sorted({quote(item["segment"], safe="=,") for item in segments["items"]} - {""})
    assert named, segments
    return {
        "api traces": readable(traces),
        "api trace": readable([api(f"/api/v1/traces/{t['trace_id']}") for t in traces]),
        "api alerts": readable(alerts),
        "api alert": readable([api(f"/api/v1/alerts/{a['id']}") for a in alerts]),
        "api documents": readable(every_page(url, "/api/v1/documents", key, 20)),
        "api segments": readable(segments),
        "api series": readable([api(f"/api/v1/segments/{s}/series") for s in named]),
        **{f"page {p}": page(p) for p in PAGES},
        "page /traces/{id}": "\n".join(page(f"/traces/{t['trace_id']}") for t in traces),
        "page /segments/{segment}": "\n".join(page(f"/segments/{s}") for s in named),
    }


def delivered(receiver: Receiver, inbox: Inbox, logged: list[logging.LogRecord]) -> dict[str, str]:
    """What each alert sink received: every post, every e-mail (decoded), every log line."""
    posts: dict[str, list[str]] = {}
    for post in receiver.received:
        posts.setdefault(post.path, []).append(readable(json.loads(post.body)))
    assert sorted(posts) == ["/api/v2/alerts", "/hooks/faithmon", "/services/slack"]
    assert inbox.messages
    mails = [f"{m['Subject']}\n{m.get_content()}" for m in inbox.messages]
    return {
        "webhook": "\n".join(posts["/hooks/faithmon"]),
        "slack": "\n".join(posts["/services/slack"]),
        "alertmanager": "\n".join(posts["/api/v2/alerts"]),
        "e-mail": "\n".join(mails),
        "log sink": "\n".join(r.getMessage() for r in logged if r.name == "faithmon.alerts"),
    }


def test_alerts_sinks_report_and_api_show_pseudonyms_only(
    served_env: dict[str, str],
    served: tuple[str, subprocess.Popen[str]],
    keys: Keys,
    receiver: Receiver,
    inbox: Inbox,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A leak hunt over everything an alert, a report or a reader is shown finds nothing,
    and each place shows the pseudonyms of what it is about."""
    url, process = served
    raw_values = send_traffic(url, keys.ingest)
    with caplog.at_level(logging.DEBUG, logger="faithmon"):
        fired, alert_rows = work(Settings.from_env(served_env))
    assert {a.segment.get("model") for a in fired} == {"m2"}, fired
    example = fired[0].details["examples"][0]
    assert not missing("\n".join(example["unsupported_claims"]), EVERY)

    report = tmp_path / "report.html"
    faithmon(served_env, "report", "--out", str(report))
    assert call(url, "/api/v1/traces")[0] == 401  # keys are required: the admin's is used
    served_text = read_everything(url, keys.admin)
    # The alert's example leads to its trace: one pseudonym for one person throughout.
    trace = get(url, f"/api/v1/traces/{example['trace_id']}", keys.admin)
    person = re.findall(r"<PERSON_[0-9a-f]{8}>", example["unsupported_claims"][0])
    assert person and all(token in trace["question"] for token in person)
    process.send_signal(signal.SIGTERM)
    _, server_log = process.communicate(timeout=60)

    haystacks = {
        "alert rows": "\n".join(alert_rows),
        **delivered(receiver, inbox, caplog.records),
        "report": report.read_text(encoding="utf-8"),
        "cli alerts": faithmon(served_env, "alerts", "list", "--json"),
        "cli traces": faithmon(served_env, "traces", "list", "--json", "--limit", "1000"),
        **served_text,
        "server log": server_log,
        "worker log": caplog.text,
    }
    assert leaks(haystacks, raw_values) == []
    lacking = {place: missing(haystacks[place], tokens) for place, tokens in SHOWN.items()}
    assert {place: kinds for place, kinds in lacking.items() if kinds} == {}
    assert "[firing] model=m2" in haystacks["log sink"]
