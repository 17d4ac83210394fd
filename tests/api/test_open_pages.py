"""The dashboard on a server open without keys (a laptop's loopback), over a real store:
segment states named as `drift status` names them, acknowledging with a name asked once,
the segment page in the overview's buckets, chunks numbered from 1, and the small
things: a page for an unknown address, the icon, a bad filter said, the login page
stepped over, sampling and trust said in words."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlencode

import pytest

from faithmon import drift
from faithmon.api.app import create_app
from faithmon.api.v1 import ReadOptions
from faithmon.cli import wiring
from faithmon.config import Settings
from faithmon.ingest.pipeline import Pipeline
from faithmon.ingest.sampler import KeepAll
from faithmon.ingest.scrub import identity
from faithmon.model import Alert, Baseline, SentinelResult
from faithmon.model.standing import NEVER_TRUSTED
from faithmon.store import Sessions, alerts, drift_runs, sentinels
from faithmon.store import engine as store_engine
from tests.api.client import json_or_text, send
from tests.api.reviewing import JUDGE, ONCE, queue_records, record
from tests.servers import serve_in_thread

# The dialect is not the point here: PostgreSQL runs in the second_backend tier.
pytestmark = pytest.mark.one_backend

# Each segment's detectors as the worker's last drift run read them, and the state the
# overview must name for it: the most alarming, an explained or folded one above ok.
DETECTORS: dict[str, tuple[list[tuple[str, str, str]], str]] = {
    "route=orders": ([("unsupported", "ok", ""), ("critical", "ok", "")], "ok"),
    "model=m1": ([("unsupported", "ok", "explained"), ("critical", "ok", "")], "explained"),
    "route=refunds": ([("unsupported", "ok", "folded"), ("critical", "ok", "")], "folded"),
    "route=billing": ([("unsupported", "pending", ""), ("critical", "ok", "explained")], "pending"),
}


NEVER = "offline/never-trusted"


@dataclass
class Open:
    url: str
    sessions: Sessions
    traces: list[str]
    alerts: list[int]


def _reading(key: str, stream: str, level: str, how: str) -> drift.Reading:
    name, _, value = key.partition("=")
    return drift.Reading(
        segment={name: value},
        baseline=Baseline(200, 10),
        baseline_source="own",
        records=40,
        unsupported=4.0,
        statistic=1.0,
        level=level,  # type: ignore[arg-type]
        threshold=4.0,
        stream=stream,  # type: ignore[arg-type]
        folded=how == "folded",
        explained_by={"route": "orders"} if how == "explained" else None,
    )


def _alert(n: int) -> Alert:
    at = datetime.now(UTC)
    return Alert(
        rule="faithfulness_drift",
        segment={"route": f"r{n}"},
        state="firing",
        severity="critical",
        opened_at=at,
        updated_at=at,
        details={"current_rate": 0.4, "baseline_rate": 0.1, "records": 30, "recovered": False},
    )


@pytest.fixture(scope="module")
def served(module_database_url: str) -> Iterator[Open]:
    engine = store_engine.make_engine(module_database_url)
    try:
        sessions = store_engine.session_factory(engine)
        made = [record(n, None) for n in range(4)]
        made[3] = replace(made[3], sample_reason="rule:error")
        queue_records(sessions, made, ONCE)  # scored by the offline judge, then queued
        readings = [
            _reading(key, stream, level, how)
            for key, (detectors, _) in DETECTORS.items()
            for stream, level, how in detectors
        ]
        with sessions.begin() as session:
            now = datetime.now(UTC)
            drift_runs.save(session, JUDGE.name, now, True, False, drift.summarize(readings, ()))
            saved = alerts.save_alerts(session, [_alert(n) for n in range(3)])
            # Another configuration, distrusted from the start: a judge never trusted.
            sentinels.add_set(session, "starter", "v1", [])
            ((set_id, *_),) = sentinels.latest_sets(session, "starter")
            result = SentinelResult(20, 10, 10, 1, 1, 0, 0.8)
            sentinels.add_run(session, set_id, JUDGE.name, result, 0.5, "good", now)
            sentinels.add_run(session, set_id, NEVER, result, 3.0, "drift", now)
            sentinels.distrust(session, NEVER, NEVER_TRUSTED, "sentinel starter: stricter")
        settings = Settings.from_env(
            {
                "FAITHMON_DATABASE_URL": module_database_url,
                "FAITHMON_SCRUB_KEY": "open-pages-test-key-0123",
            }
        )
        auth = wiring.make_auth(settings, sessions, "127.0.0.1")  # no key: open
        pipeline = Pipeline(lambda batch: None, sampler=KeepAll(), scrubber=identity)
        reads = ReadOptions(judge=JUDGE.name, drift=drift.DriftConfig(dimensions=("route",)))
        app = create_app(pipeline, sessions=sessions, auth=auth, reads=reads)
        with serve_in_thread(app) as url:
            ids = [a.id for a in saved if a.id is not None]
            yield Open(url, sessions, [r.trace_id for r in made], ids)
    finally:
        engine.dispose()


def fetch(
    served: Open,
    path: str,
    form: dict[str, str] | None = None,
    headers: dict[str, str] | None = None,
    accept: str = "text/html",
) -> tuple[int, str, dict[str, str]]:
    """(status, body, headers) of a GET, or of a form post when ``form`` is given."""
    data = urlencode(form).encode() if form is not None else None
    sent = {"Accept": accept, **(headers or {})}
    if data is not None:
        sent["Content-Type"] = "application/x-www-form-urlencoded"
    status, body, got = send(served.url + path, data, sent, follow_redirects=False)
    return status, body.decode(), {k.lower(): v for k, v in got.items()}


def test_the_overview_names_each_segments_state_as_drift_status_does(served: Open) -> None:
    """A segment's badge is its most alarming detector's state: explained and folded
    rank above ok, below an alert of its own."""
    _, overview, _ = fetch(served, "/")
    shown = dict(
        re.findall(
            r'>([a-z0-9=]+)</a></td><td><span class="badge [a-z]+">([a-z]+)</span>', overview
        )
    )
    assert shown == {key: state for key, (_, state) in DETECTORS.items()}


def test_the_segment_page_counts_in_the_overviews_buckets(served: Open) -> None:
    """The same span is cut in the same bucket width on the overview and a segment's page."""
    width = re.compile(r"one point per ([0-9.]+ [a-z]+)")
    _, overview, _ = fetch(served, "/")
    _, segment, _ = fetch(served, "/segments/route=orders")
    assert width.findall(overview) and set(width.findall(segment)) == set(width.findall(overview))
    assert "fewer than 10 answers" in segment  # the legend says what hollow and dotted mean


def test_an_alert_is_acknowledged_with_a_name_asked_once(served: Open) -> None:
    """No key names the caller: the first acknowledgement asks a name and keeps it in the
    browser; the page, the API and the next acknowledgement use it."""
    first, second, _ = served.alerts
    _, page, _ = fetch(served, "/alerts")
    assert page.count('class="inline ack"') == 2 * len(served.alerts)  # table and card
    status, asked, _ = fetch(served, f"/alerts/{first}/ack", {})
    assert status == 422 and 'name="by"' in asked and "Who acknowledges" in asked
    status, _, headers = fetch(served, f"/alerts/{first}/ack", {"by": "  Ann <b>Lee</b> "})
    assert status == 303 and headers["location"] == f"/alerts#alert-{first}"
    cookie = headers["set-cookie"].split(";")[0]
    assert cookie.startswith("faithmon_name=") and "httponly" in headers["set-cookie"].lower()
    _, page, _ = fetch(served, "/alerts")
    assert "acknowledged by Ann &lt;b&gt;Lee&lt;/b&gt; at " in page and "<b>Lee" not in page
    status, _, _ = fetch(served, f"/alerts/{second}/ack", {}, {"Cookie": cookie})
    assert status == 303
    for alert_id in (first, second):
        status, body, _ = send(f"{served.url}/api/v1/alerts/{alert_id}")
        shown: Any = json_or_text(body)
        assert status == 200 and shown["acked_by"] == "Ann <b>Lee</b>" and shown["acked_at"]
    assert fetch(served, "/alerts/99999/ack", {"by": "Ann"})[0] == 404


def test_an_unknown_address_is_a_page_for_a_browser_and_json_for_a_program(served: Open) -> None:
    status, body, headers = fetch(served, "/no/%3Cscript%3Ehere")
    assert status == 404 and headers["content-type"].startswith("text/html")
    assert "There is no page at /no/&lt;script&gt;here" in body and '<nav class="top">' in body
    assert "<script>here" not in body
    for path, accept in (("/no/such", "application/json"), ("/api/v1/nothing", "text/html")):
        status, body, headers = fetch(served, path, accept=accept)
        assert status == 404 and json_or_text(body.encode()) == {"detail": "Not Found"}


def test_every_page_names_its_own_icon(served: Open) -> None:
    """Served from the package, so no page asks for a /favicon.ico it lacks."""
    for path in ("/", "/alerts", "/traces", "/sentinels", "/nowhere"):
        assert '<link rel="icon" href="/static/favicon.svg"' in fetch(served, path)[1]
    status, body, headers = fetch(served, "/static/favicon.svg", accept="image/*")
    assert status == 200 and headers["content-type"] == "image/svg+xml" and "<svg" in body
    status, _, headers = fetch(served, "/favicon.ico", accept="image/*")
    assert status == 301 and headers["location"] == "/static/favicon.svg"


def test_the_login_page_steps_aside_on_an_open_server(served: Open) -> None:
    status, _, headers = fetch(served, "/login?next=/alerts")
    assert status == 303 and headers["location"] == "/alerts"
    assert fetch(served, "/login?next=//evil.example")[2]["location"] == "/"


def test_a_status_the_filter_does_not_know_is_said(served: Open) -> None:
    _, page, _ = fetch(served, "/traces?status=bogus")
    assert "status must be one of pending, scored," in page and "or invalid" in page
    _, page, _ = fetch(served, "/traces?status=invalid")
    assert "status must be" not in page and "No trace matches" in page
    status, _, _ = fetch(served, "/api/v1/traces?status=invalid", accept="application/json")
    assert status == 200


def test_sampling_and_trust_are_said_in_words(served: Open) -> None:
    """Why a trace was kept, and a judge distrusted from the start, read as words."""
    _, ratio, _ = fetch(served, f"/traces/{served.traces[0]}")
    _, rule, _ = fetch(served, f"/traces/{served.traces[3]}")
    assert "kept by the sampling ratio" in ratio and "sampled:" not in ratio
    assert "kept by the keep-always rule error" in rule
    _, sentinel_page, _ = fetch(served, "/sentinels")
    trust = sentinel_page[sentinel_page.index("<h2>Trust</h2>") :]
    assert NEVER in trust and "never trusted" in trust and "1970" not in trust


def test_the_review_page_numbers_chunks_from_one(served: Open) -> None:
    """As the answer's [n] markers and the trace page do."""
    _, page, _ = fetch(served, f"/review/{served.traces[0]}")
    heads = re.findall(r'<span class="chunk-head">\[(\d+)\]', page)
    assert heads == ["1", "2"]
    cited = re.findall(r"· chunk \[(\d+)\]", page)
    assert cited and "0" not in cited
