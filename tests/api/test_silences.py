"""Silences in the read API and on the dashboard, over a real server on SQLite and
PostgreSQL: making one needs `review` and records the key; a tenant's key makes only
silences of its tenant and sees only those; the alerts page mutes a segment for 2 h in
Chromium, with what the store holds shown as text."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import pytest

from faithmon.alerts.matchers import alert_labels
from faithmon.alerts.silencing import silenced_by
from faithmon.api.app import create_app
from faithmon.api.keys import key_hash, new_key
from faithmon.cli import wiring
from faithmon.config import Settings
from faithmon.ingest.pipeline import Pipeline
from faithmon.ingest.sampler import KeepAll
from faithmon.ingest.scrub import identity
from faithmon.model import Alert, Chunk, Claim, Judgement, RagRecord, segment_name
from faithmon.store import Sessions, evaluations, records
from faithmon.store import alerts as store_alerts
from faithmon.store import engine as store_engine
from faithmon.store import keys as store_keys
from faithmon.store import silences as store_silences
from tests.api.client import call_as
from tests.servers import serve_in_thread

# The dialect is not the point here: PostgreSQL runs in the second_backend tier.
pytestmark = pytest.mark.one_backend

HOSTILE = '<script>window.pwned = 1</script><img src=x onerror="window.pwned=2">'
JUDGE = "offline/silences"


@dataclass
class Served:
    url: str
    sessions: Sessions
    keys: dict[str, str]
    prefixes: dict[str, str]
    alerts: dict[str, Alert]


def _seed(sessions: Sessions) -> dict[str, Alert]:
    now = datetime.now(UTC)
    record = RagRecord(
        trace_id="a" * 32,
        question="q",
        answer="a",
        chunks=(Chunk(0, "a"),),
        labels={"tenant": "acme"},
        started_at=now,
    )
    with sessions.begin() as session:
        records.save_records(session, [record])
    with sessions.begin() as session:
        for record_id, _ in records.claim_pending(session, "test", 10, 60):
            judgement = Judgement(JUDGE, "ok", (Claim("a", "supported", chunk=0),))
            evaluations.save_evaluation(session, record_id, judgement)
    segments = {
        "acme": {"route": HOSTILE, "tenant": "acme"},
        "globex": {"route": "search", "tenant": "globex"},
    }
    made = [
        Alert(
            rule="faithfulness_drift",
            segment=segment,
            state="firing",
            severity="critical",
            opened_at=now,
            updated_at=now,
            details={"current_rate": 0.4, "baseline_rate": 0.1, "records": 30},
            notified_at=now,
        )
        for segment in segments.values()
    ]
    with sessions.begin() as session:
        saved = store_alerts.save_alerts(session, made)
    return dict(zip(segments, saved, strict=True))


@pytest.fixture
def served(database_url: str) -> Iterator[Served]:
    engine = store_engine.make_engine(database_url)
    try:
        store_engine.upgrade(engine)
        sessions = store_engine.session_factory(engine)
        alerts = _seed(sessions)
        keys, prefixes = {}, {}
        with sessions.begin() as session:
            for name, scopes, tenant in (
                ("admin", ["admin"], None),
                ("acme", ["read", "review"], "acme"),
                ("reader", ["read"], None),
            ):
                key, prefix = new_key()
                store_keys.create_key(session, prefix, key_hash(key), scopes, tenant)
                keys[name], prefixes[name] = key, prefix
        settings = Settings.from_env(
            {"FAITHMON_DATABASE_URL": database_url, "FAITHMON_SCRUB_KEY": "silences-test-0123"}
        )
        auth = wiring.make_auth(settings, sessions, "127.0.0.1")
        pipeline = Pipeline(lambda batch: None, sampler=KeepAll(), scrubber=identity)
        app = create_app(pipeline, sessions=sessions, auth=auth)
        with serve_in_thread(app) as url:
            yield Served(url, sessions, keys, prefixes, alerts)
    finally:
        engine.dispose()


def test_silences_in_the_api(served: Served) -> None:
    body = {"matchers": ["model=m2"], "duration": "2h", "comment": "deploy"}
    status, made = call_as(served, "POST", "/api/v1/silences", "admin", body)
    assert status == 201, made
    assert made["matchers"] == ["model=m2"] and made["state"] == "active"
    assert made["created_by"] == f"key fm_{served.prefixes['admin']}" and made["tenant"] is None
    assert datetime.fromisoformat(made["ends_at"]) - datetime.fromisoformat(
        made["starts_at"]
    ) == timedelta(hours=2)

    # A tenant's key: its silence is bound to its tenant whatever it asked for.
    wide = {"matchers": ["tenant=~.*"], "ends_at": _later(3), "comment": "mine"}
    status, own = call_as(served, "POST", "/api/v1/silences", "acme", wide)
    assert status == 201, own
    assert own["matchers"] == ["tenant=~.*", "tenant=acme"] and own["tenant"] == "acme"
    globex = {"route": "search", "tenant": "globex", "kind": "faithfulness_drift"}
    with served.sessions() as session:
        running = store_silences.active_silences(session, datetime.now(UTC))
    assert [s.id for s in running] == [made["id"], own["id"]]
    assert silenced_by([running[1]], globex, datetime.now(UTC)) is None

    status, page = call_as(served, "GET", "/api/v1/silences", "acme")
    assert status == 200 and [s["id"] for s in page["items"]] == [own["id"]]
    status, page = call_as(served, "GET", "/api/v1/silences?limit=1", "admin")
    assert [s["id"] for s in page["items"]] == [own["id"]] and page["next_cursor"]
    status, rest = call_as(served, "GET", f"/api/v1/silences?cursor={page['next_cursor']}", "admin")
    assert [s["id"] for s in rest["items"]] == [made["id"]] and rest["next_cursor"] is None
    assert call_as(served, "GET", f"/api/v1/silences/{made['id']}", "acme")[0] == 404

    # Making and ending need `review`; another tenant's silence is unknown.
    assert call_as(served, "POST", "/api/v1/silences", "reader", body)[0] == 403
    assert call_as(served, "POST", f"/api/v1/silences/{made['id']}/expire", "acme")[0] == 404
    status, ended = call_as(served, "POST", f"/api/v1/silences/{made['id']}/expire", "admin")
    assert status == 200 and ended["state"] == "expired" and ended["already_ended"] is False
    status, again = call_as(served, "POST", f"/api/v1/silences/{made['id']}/expire", "admin")
    assert status == 200 and again["already_ended"] is True
    assert again["ends_at"] == ended["ends_at"]
    status, shown = call_as(served, "GET", "/api/v1/silences", "admin")
    assert [s["id"] for s in shown["items"]] == [own["id"]]
    status, every = call_as(served, "GET", "/api/v1/silences?include_ended=true", "admin")
    assert [s["id"] for s in every["items"]] == [own["id"], made["id"]]


def _later(hours: int) -> str:
    return (datetime.now(UTC) + timedelta(hours=hours)).isoformat()


@pytest.mark.parametrize(
    ("body", "says"),
    [
        ({"matchers": ["bad name=x"], "duration": "2h", "comment": "c"}, "not a label name"),
        ({"matchers": ["m=~("], "duration": "2h", "comment": "c"}, "not a regular expression"),
        ({"matchers": ["m=x"], "duration": "2 h", "comment": "c"}, "not a duration"),
        ({"matchers": ["m=x"], "comment": "c"}, "either duration or ends_at"),
        ({"matchers": ["m=x"], "duration": "2h", "ends_at": _later(1), "comment": "c"}, "either"),
        ({"matchers": ["m=x"], "ends_at": _later(-1), "comment": "c"}, "must end"),
        ({"matchers": [], "duration": "2h", "comment": "c"}, "at least 1"),
        ({"matchers": ["m=x"], "duration": "2h", "comment": ""}, "at least 1"),
    ],
)
def test_a_bad_silence_is_a_422_saying_why(served: Served, body: object, says: str) -> None:
    status, answer = call_as(served, "POST", "/api/v1/silences", "admin", body)
    assert status == 422 and says in json.dumps(answer), answer


@pytest.mark.browser
def test_mute_this_segment_from_the_alerts_page(served: Served, chromium: str) -> None:
    from playwright.sync_api import Request, expect, sync_playwright

    elsewhere: list[str] = []

    def note(request: Request) -> None:
        if not request.url.startswith(served.url):
            elsewhere.append(request.url)

    acme = served.alerts["acme"]
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, headless=True)
        page = browser.new_page()
        page.on("request", note)
        page.goto(served.url + "/alerts")
        page.get_by_label("API key").fill(served.keys["acme"])
        page.get_by_role("button", name="Log in").click()
        expect(page).to_have_url(f"{served.url}/alerts")
        expect(page.locator("#silences-card")).to_contain_text("No silence is active")
        # The acme key sees its own alert only, and mutes it.
        rows = page.locator("table#mute tbody tr")
        expect(rows).to_have_count(1)
        # The segment as people read it (unescaped), shown as text.
        expect(rows.first).to_contain_text(segment_name({"route": HOSTILE}))
        rows.first.get_by_role("button", name="Mute this segment for 2 h").click()
        expect(page.locator("table#silences tbody tr")).to_have_count(1)
        expect(page.locator("table#silences")).to_contain_text("active")
        expect(page.locator("table#silences")).to_contain_text(f"key fm_{served.prefixes['acme']}")
        assert page.evaluate("typeof window.pwned") == "undefined"
        assert page.locator("main img").count() == 0

        now = datetime.now(UTC)
        with served.sessions() as session:
            (silence,) = store_silences.active_silences(session, now)
        assert silence.tenant == "acme" and silence.ends_at - silence.starts_at == timedelta(
            hours=2
        )
        assert silenced_by([silence], alert_labels(acme), now) == silence
        assert silenced_by([silence], alert_labels(served.alerts["globex"]), now) is None
        other_kind = {**alert_labels(acme), "kind": "no_data"}
        assert silenced_by([silence], other_kind, now) is None

        page.get_by_role("button", name="Expire").click()
        expect(page.locator("#silences-card")).to_contain_text("No silence is active")
        browser.close()
    with served.sessions() as session:
        assert store_silences.active_silences(session, datetime.now(UTC)) == []
    assert elsewhere == []
