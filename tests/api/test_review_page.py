"""The dashboard's review page over a real server on SQLite and PostgreSQL: trace text is
escaped, tenants stay apart, a read-only key may look but not label, and the form works
without the script. In Chromium a reviewer labels with the keyboard alone: the labels are
stored, the next item loads, Escape skips, and hostile trace text stays text."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlencode

import pytest
from sqlalchemy import select

from faithmon.store import review as store_review
from faithmon.store.tables import ReviewLabelRow
from tests.api.client import send
from tests.api.reviewing import HOSTILE, Served, of, serve

# The dialect is not the point here: PostgreSQL runs in the second_backend tier.
pytestmark = pytest.mark.one_backend


@pytest.fixture
def served(database_url: str) -> Iterator[Served]:
    with serve(database_url) as served:
        yield served


def fetch(
    served: Served, path: str, role: str, form: dict[str, str] | None = None
) -> tuple[int, str, str]:
    """(status, HTML, Location) of a GET, or of a form post when ``form`` is given."""
    data = urlencode(form).encode() if form is not None else None
    headers = {"Authorization": f"Bearer {served.keys[role]}", "Accept": "text/html"}
    if data is not None:
        headers["Content-Type"] = "application/x-www-form-urlencoded"
    status, body, got = send(served.url + path, data, headers, follow_redirects=False)
    return status, body.decode(), got["location"] or ""


def test_the_page_escapes_trace_text_and_keeps_tenants_apart(served: Served) -> None:
    hostile = served.traces[0]
    status, body, _ = fetch(served, f"/review/{hostile}", "reader")
    assert status == 200 and "<script>window" not in body and "<img src=x" not in body
    assert body.count("&lt;script&gt;window.pwned = 1&lt;/script&gt;") >= 4  # q, chunk, a, claim
    _, desk, _ = fetch(served, "/review", "reader")
    assert "lacks the review scope" in desk and 'action="/review/next"' not in desk
    assert all(t in desk for t in served.traces)
    _, desk, _ = fetch(served, "/review", "acme")
    assert 'action="/review/next"' in desk
    assert [t for t in served.traces if t in desk] == of(served, "acme")
    assert fetch(served, f"/review/{hostile}", "acme")[0] == 404  # globex's
    assert fetch(served, "/review/next", "reader", {})[0] == 403
    assert (
        fetch(served, f"/review/{hostile}/labels", "reader", {"verdict-0": "supported"})[0] == 403
    )


def test_the_form_works_without_the_script(served: Served) -> None:
    trace_id, then = of(served, "acme")[:2]
    status, _, location = fetch(served, "/review/next", "acme", {})
    assert (status, location) == (303, f"/review/{trace_id}")
    path = f"/review/{trace_id}/labels"
    status, body, _ = fetch(served, path, "acme", {"verdict-0": "supported", "note": "n"})
    assert status == 422 and "claim 1 has no verdict" in body
    assert 'value="supported" required checked' in body  # what was chosen is kept
    form = {"verdict-0": "supported", "verdict-1": "contradicted", "critical-1": "1"}
    status, _, location = fetch(served, path, "acme", form)
    assert (status, location) == (303, f"/review/{then}?labelled={trace_id}")
    status, body, _ = fetch(served, path, "acme", form)
    assert status == 409 and f"the review item of trace {trace_id} is done" in body
    status, _, location = fetch(served, f"/review/{then}/skip", "acme", {})
    assert (status, location) == (303, f"/review/{of(served, 'acme')[2]}?skipped={then}")
    with served.sessions() as session:
        (reviewed,) = store_review.reviewed(session)
        skipped = store_review.find(session, then)
    assert reviewed.labels == {served.who("acme"): {0: "supported", 1: "contradicted"}}
    assert skipped is not None and skipped.status == store_review.SKIPPED


def test_an_open_server_asks_the_reviewers_name_once(database_url: str) -> None:
    """No key exists, so none names the reviewer: the desk asks a name, Start refuses
    without one, and the name given is kept in the browser and recorded with the labels
    (not "api"); a browser that gave none is sent back to the desk to give it."""
    with serve(database_url, keyed=False) as served:

        def post(path: str, form: dict[str, str], cookie: str = "") -> tuple[int, str, Any]:
            headers = {"Accept": "text/html", "Content-Type": "application/x-www-form-urlencoded"}
            if cookie:
                headers["Cookie"] = cookie
            data = urlencode(form).encode()
            status, body, got = send(served.url + path, data, headers, follow_redirects=False)
            return status, body.decode(), got

        status, desk, _ = send(served.url + "/review", headers={"Accept": "text/html"})
        assert status == 200 and 'name="by" required' in desk.decode()
        status, body, _ = post("/review/next", {})
        assert status == 422 and "Give your name first" in body
        status, _, got = post("/review/next", {"by": "  Ann \t Lee <b> "})
        first = served.traces[0]
        assert (status, got["location"]) == (303, f"/review/{first}")
        cookie = got["set-cookie"].split(";")[0]
        assert (
            cookie.startswith("faithmon_name=") and "samesite=strict" in got["set-cookie"].lower()
        )
        status, _, got = post(f"/review/{first}/labels", {"verdict-0": "supported"})
        assert (status, got["location"]) == (303, "/review")  # no name: the desk asks it
        labels = {f"verdict-{n}": "supported" for n in range(3)}
        status, _, got = post(f"/review/{first}/labels", labels, cookie)
        assert status == 303 and got["location"].endswith(f"?labelled={first}")
        with served.sessions() as session:
            (reviewed,) = store_review.reviewed(session)
        assert list(reviewed.labels) == ["Ann Lee <b>"]
        status, desk, _ = send(
            served.url + "/review", headers={"Accept": "text/html", "Cookie": cookie}
        )
        assert 'value="Ann Lee &lt;b&gt;"' in desk.decode()  # asked once: kept, escaped


@pytest.mark.browser
def test_review_with_the_keyboard_in_chromium(served: Served, chromium: str) -> None:
    from playwright.sync_api import Request, expect, sync_playwright

    elsewhere: list[str] = []

    def note(request: Request) -> None:
        if not request.url.startswith(served.url):
            elsewhere.append(request.url)

    hostile, second, third = served.traces[:3]
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, headless=True)
        page = browser.new_page()
        page.on("request", note)
        page.goto(served.url + "/review")
        page.get_by_label("API key").fill(served.keys["ann"])
        page.get_by_role("button", name="Log in").click()
        expect(page).to_have_url(f"{served.url}/review")
        expect(page.locator("table#queue tbody tr")).to_have_count(len(served.traces))

        # From here on, the keyboard only. A key pressed once the URL has changed but
        # before the page's script has run would be lost: each page is waited for loaded.
        page.wait_for_load_state()
        keys = page.keyboard
        keys.press("Enter")
        expect(page).to_have_url(f"{served.url}/review/{hostile}")
        page.wait_for_load_state()
        expect(page.locator("fieldset.claim.selected")).to_have_id("claim-0")
        expect(page.locator("fieldset.claim")).to_have_count(3)
        expect(page.locator("p.question")).to_contain_text(HOSTILE)
        expect(page.locator(".chunk-text").first).to_contain_text(HOSTILE)
        expect(page.locator("fieldset.claim").nth(2)).to_contain_text(HOSTILE)
        expect(page.locator("fieldset.claim").nth(2).locator("q.quote")).to_have_text(HOSTILE)
        assert page.evaluate("typeof window.pwned") == "undefined"
        assert page.locator("main img, main script").count() == 0

        # Enter before every claim has a verdict: it names the first without one.
        keys.press("s")
        keys.press("Enter")
        expect(page.locator("#review-status")).to_contain_text("claim 1 has no verdict")
        expect(page.locator("fieldset.claim.selected")).to_have_id("claim-1")
        for key in ("u", "x", "j", "n", "ArrowUp", "ArrowDown", "c"):
            keys.press(key)
        expect(page.locator("fieldset.claim.selected")).to_have_id("claim-2")
        expect(page.locator("input[name=critical-1]")).to_be_checked()
        expect(page.locator('input[name=verdict-2][value="contradicted"]')).to_be_checked()
        keys.press("Enter")
        expect(page).to_have_url(f"{served.url}/review/{second}?labelled={hostile}")
        expect(page.locator(".notice")).to_contain_text(f"Labelled trace {hostile}.")
        page.wait_for_load_state()
        expect(page.locator("fieldset.claim.selected")).to_have_id("claim-0")
        with served.sessions() as session:
            (reviewed,) = store_review.reviewed(session)
            critical = session.scalars(
                select(ReviewLabelRow.claim_index).where(ReviewLabelRow.critical)
            ).all()
        assert reviewed.trace_id == hostile
        assert reviewed.labels == {
            served.who("ann"): {0: "supported", 1: "unsupported", 2: "contradicted"}
        }
        assert critical == [1]

        # Escape skips the item, and the next one loads.
        keys.press("Escape")
        expect(page).to_have_url(re.compile(re.escape(f"/review/{third}?skipped={second}") + "$"))
        with served.sessions() as session:
            skipped = store_review.find(session, second)
        assert skipped is not None and skipped.status == store_review.SKIPPED
        browser.close()
    assert elsewhere == []
