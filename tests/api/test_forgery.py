"""Request forgery, DNS rebinding and shared alerts, against a real server and Chromium:
a page of another origin (another port of the same host, where a logged-in user's
cookie still goes) cannot acknowledge an alert or log anyone in; a request naming a Host
the server does not answer to is refused; programs that send no Origin keep working
with their key; a tenant's key cannot acknowledge an alert every tenant shares."""

from __future__ import annotations

import http.client
from collections.abc import Iterator
from dataclasses import dataclass, replace
from urllib.parse import urlsplit

import pytest
from starlette.applications import Starlette
from starlette.responses import HTMLResponse
from starlette.routing import Route

from faithmon.api.app import create_app
from faithmon.api.keys import key_hash, new_key
from faithmon.cli import wiring
from faithmon.config import Settings
from faithmon.ingest.pipeline import Pipeline
from faithmon.ingest.sampler import KeepAll
from faithmon.ingest.scrub import identity
from faithmon.store import Sessions
from faithmon.store import alerts as store_alerts
from faithmon.store import engine as store_engine
from faithmon.store import keys as store_keys
from tests.alerts.factory import ALERT
from tests.servers import serve_in_thread

# The dialect is not the point here: PostgreSQL runs in the second_backend tier.
pytestmark = pytest.mark.one_backend


@dataclass
class Served:
    url: str
    sessions: Sessions
    key: str
    alert_id: int
    tenant_key: str
    judge_alert_id: int


@pytest.fixture
def served(database_url: str) -> Iterator[Served]:
    engine = store_engine.make_engine(database_url)
    try:
        store_engine.upgrade(engine)
        sessions = store_engine.session_factory(engine)
        # A tenant-less drift alert, and a judge alert every tenant sees.
        alert = replace(ALERT, id=None, segment={"route": "search"})
        judge = replace(ALERT, id=None, rule="judge_error", segment={"judge": "offline/forgery"})
        key, prefix = new_key()
        tenant_key, tenant_prefix = new_key()
        with sessions.begin() as session:
            saved, shared = store_alerts.save_alerts(session, [alert, judge])
            store_keys.create_key(session, prefix, key_hash(key), ["admin"], None)
            store_keys.create_key(
                session, tenant_prefix, key_hash(tenant_key), ["read", "review"], "acme"
            )
        settings = Settings.from_env(
            {"FAITHMON_DATABASE_URL": database_url, "FAITHMON_SCRUB_KEY": "forgery-test-0123"}
        )
        auth = wiring.make_auth(settings, sessions, "127.0.0.1")
        pipeline = Pipeline(lambda batch: None, sampler=KeepAll(), scrubber=identity)
        app = create_app(pipeline, sessions=sessions, auth=auth)
        with serve_in_thread(app) as url:
            assert saved.id is not None and shared.id is not None
            yield Served(url, sessions, key, saved.id, tenant_key, shared.id)
    finally:
        engine.dispose()


def _acked(served: Served, alert_id: int | None = None) -> bool:
    wanted = served.alert_id if alert_id is None else alert_id
    with served.sessions() as session:
        (alert,) = [a for a in store_alerts.list_alerts(session) if a.id == wanted]
    return "acked_by" in alert.details


def _foreign(target: str, fields: dict[str, str]) -> Starlette:
    """A page of another origin that posts a form to ``target`` as soon as it loads."""
    inputs = "".join(f'<input type="hidden" name="{k}" value="{v}">' for k, v in fields.items())
    page = (
        f'<form id="f" method="post" action="{target}">{inputs}</form>'
        '<script>document.getElementById("f").submit()</script>'
    )
    return Starlette(routes=[Route("/", lambda request: HTMLResponse(page))])


def _request(url: str, method: str, path: str, headers: dict[str, str]) -> tuple[int, str]:
    parts = urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=10)
    try:
        connection.request(method, path, headers=headers, body=b"" if method == "POST" else None)
        response = connection.getresponse()
        return response.status, response.read().decode()
    finally:
        connection.close()


@pytest.mark.browser
def test_a_page_of_another_origin_cannot_act_for_a_logged_in_user(
    served: Served, chromium: str
) -> None:
    from playwright.sync_api import expect, sync_playwright

    with (
        serve_in_thread(_foreign(f"{served.url}/alerts/{served.alert_id}/ack", {})) as ack_page,
        serve_in_thread(_foreign(f"{served.url}/login", {"key": served.key})) as login_page,
        sync_playwright() as p,
    ):
        browser = p.chromium.launch(executable_path=chromium, headless=True)
        context = browser.new_context()
        # A page of another origin cannot log the browser in with a key it knows.
        page = context.new_page()
        page.goto(login_page)
        expect(page.locator("body")).to_contain_text("another origin")
        assert context.cookies(served.url) == []
        # The user logs in on faithmon itself ...
        page.goto(served.url + "/alerts")
        page.get_by_label("API key").fill(served.key)
        page.get_by_role("button", name="Log in").click()
        expect(page).to_have_url(f"{served.url}/alerts")
        assert context.cookies(served.url) != []
        # ... then opens a page on another port, which posts to the ack route: the
        # browser sends the session cookie along (same site), and faithmon refuses.
        forged = context.new_page()
        forged.goto(ack_page)
        expect(forged.locator("body")).to_contain_text("another origin")
        assert not _acked(served)
        # From faithmon's own page the same form is accepted.
        page.goto(served.url + "/alerts")
        page.evaluate(
            """(action) => { const form = document.createElement("form");
            form.method = "post"; form.action = action;
            document.body.appendChild(form); form.submit(); }""",
            f"/alerts/{served.alert_id}/ack",
        )
        expect(page).to_have_url(f"{served.url}/alerts#alert-{served.alert_id}")
        browser.close()
    assert _acked(served)


def test_a_host_the_server_does_not_answer_to_is_refused(served: Served) -> None:
    """DNS rebinding: a name that resolves to the loopback address reads nothing."""
    port = urlsplit(served.url).port
    status, body = _request(served.url, "GET", "/healthz", {"Host": f"attacker.example:{port}"})
    assert status == 400 and "FAITHMON_ALLOWED_HOSTS" in body
    for host in (f"localhost:{port}", f"127.0.0.1:{port}"):
        assert _request(served.url, "GET", "/healthz", {"Host": host})[0] == 200


def test_programs_with_a_key_post_and_foreign_origins_do_not(served: Served) -> None:
    """An API client sends no Origin and acts with its key; the same request naming
    another origin, or the opaque origin "null", is refused before the key is read."""
    bearer = {"Authorization": f"Bearer {served.key}"}
    path = f"/api/v1/alerts/{served.alert_id}/ack"
    for origin in ("http://127.0.0.1:1", "null", "http://attacker.example"):
        status, body = _request(served.url, "POST", path, {**bearer, "Origin": origin})
        assert status == 403 and "another origin" in body
    assert not _acked(served)
    assert _request(served.url, "POST", path, bearer)[0] == 200
    assert _acked(served)


def test_a_tenants_key_cannot_acknowledge_an_alert_every_tenant_shares(served: Served) -> None:
    """A judge alert is every tenant's: the tenant's review key sees it but may not
    acknowledge it for all (403, on the API and the dashboard's form); a key bound to
    no tenant may."""
    path = f"/api/v1/alerts/{served.judge_alert_id}/ack"
    status, body = _request(
        served.url, "POST", path, {"Authorization": f"Bearer {served.tenant_key}"}
    )
    assert status == 403 and "every tenant shares" in body
    status, _ = _request(
        served.url,
        "POST",
        f"/alerts/{served.judge_alert_id}/ack",
        {"Authorization": f"Bearer {served.tenant_key}"},
    )
    assert status == 403 and not _acked(served, served.judge_alert_id)
    assert (
        _request(
            served.url,
            "GET",
            f"/api/v1/alerts/{served.judge_alert_id}",
            {"Authorization": f"Bearer {served.tenant_key}"},
        )[0]
        == 200
    )
    status, _ = _request(served.url, "POST", path, {"Authorization": f"Bearer {served.key}"})
    assert status == 200 and _acked(served, served.judge_alert_id)


def test_metrics_refuse_a_key_bound_to_a_tenant(served: Served) -> None:
    """/metrics holds every tenant's segments and label values: a tenant's read key gets
    403, a key bound to none the exposition."""
    status, body = _request(
        served.url, "GET", "/metrics", {"Authorization": f"Bearer {served.tenant_key}"}
    )
    assert status == 403 and "bound to none" in body
    status, body = _request(
        served.url, "GET", "/metrics", {"Authorization": f"Bearer {served.key}"}
    )
    assert status == 200 and "faithmon" in body


@pytest.mark.browser
def test_logging_out_ends_the_session_not_only_the_cookie(served: Served, chromium: str) -> None:
    """A copy of the session cookie (another browser, a stolen one) is refused once its
    key logged out: the dashboard sends it to the login page, the API answers 401."""
    from playwright.sync_api import expect, sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, headless=True)
        context = browser.new_context()
        page = context.new_page()
        page.goto(served.url + "/alerts")
        page.get_by_label("API key").fill(served.key)
        page.get_by_role("button", name="Log in").click()
        expect(page).to_have_url(f"{served.url}/alerts")
        (cookie,) = context.cookies(served.url)
        copy = f"{cookie['name']}={cookie['value']}"
        assert _request(served.url, "GET", "/api/v1/alerts", {"Cookie": copy})[0] == 200
        page.get_by_role("button", name="Log out").click()
        expect(page).to_have_url(f"{served.url}/login")
        browser.close()
    assert _request(served.url, "GET", "/api/v1/alerts", {"Cookie": copy})[0] == 401
    page_status, _ = _request(served.url, "GET", "/alerts", {"Cookie": copy, "Accept": "text/html"})
    assert page_status == 303
