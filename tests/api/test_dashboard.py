"""The dashboard in Chromium on a real server: log in with a key, walk the pages, follow a
trace from the overview to its claims, and a wrong citation to the chunk it names; hostile
trace text stays text (policy findings too); tenants stay apart."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from html import escape
from pathlib import Path

import pytest
from click.testing import CliRunner

from faithmon.api.app import create_app
from faithmon.api.keys import key_hash, new_key
from faithmon.api.v1 import ReadOptions
from faithmon.cli import main, wiring
from faithmon.config import Settings
from faithmon.demo.run import SEVERITY_RULES
from faithmon.ingest.pipeline import Pipeline
from faithmon.ingest.sampler import KeepAll
from faithmon.ingest.scrub import identity
from faithmon.judge.contracts import Checked
from faithmon.judge.offline import OfflineJudge
from faithmon.model import Chunk, Claim, Judge, Judgement, PolicyFinding, RagRecord
from faithmon.store import Sessions, evaluations, records
from faithmon.store import keys as store_keys
from tests.api.client import send
from tests.api.seed import CITED_CHUNKS, CITED_TRACE, SECRET, cited_record
from tests.servers import serve_in_thread

# The dialect is not the point here: PostgreSQL runs in the second_backend tier.
pytestmark = pytest.mark.one_backend

# Each field of a trace carries one: none may run, fetch, or change the page.
PAYLOADS = (
    '<script>window.pwned = 1; document.title = "owned"</script>',
    '<img src="https://evil.example/x.png" onerror="window.pwned = 2">',
    '<a href="javascript:window.pwned = 3">click</a>',
    "{{7*7}} ${7*7} <svg onload=window.pwned=4>",
)
HOSTILE = " ".join(PAYLOADS)
HOSTILE_TRACE = "e" * 32
OTHER_TENANT_TRACE = "f" * 32


@dataclass
class Served:
    url: str
    admin: str
    acme_reader: str
    ingest_only: str


def _hostile_records(sessions: Sessions, judge: Judge) -> None:
    """The hostile and the other tenant's traces, judged by hand under the configured
    judge's name; the cited trace scored by that judge itself (the contracts wrap it)."""
    chunk = Chunk(position=0, text=f"Refunds take 5 days. {HOSTILE}", id=f"doc {HOSTILE}")
    hostile = RagRecord(
        trace_id=HOSTILE_TRACE,
        question=f"When is my refund? {HOSTILE}",
        answer=f"Refunds take 5 days. {HOSTILE}",
        chunks=(chunk,),
        labels={"route": HOSTILE, "tenant": "acme"},
        started_at=datetime.now(UTC),
    )
    other = RagRecord(
        trace_id=OTHER_TENANT_TRACE,
        question="Globex secret question",
        answer="Globex secret answer.",
        chunks=(Chunk(position=0, text="Globex secret answer."),),
        labels={"tenant": "globex", "route": "secret"},
        started_at=datetime.now(UTC),
    )
    claims = (
        Claim(
            "Refunds take 5 days.",
            "partial",
            chunk=0,
            quote="Refunds take 5 days.",
            critical=True,
            critical_rule=PAYLOADS[3],
            missing=PAYLOADS[1],
        ),
        Claim(HOSTILE, "unsupported", critical=True),
    )
    policy = tuple(PolicyFinding(f"rule {p}", p) for p in PAYLOADS)
    cited = cited_record({"tenant": "acme", "route": "refunds"})
    with sessions.begin() as session:
        records.save_records(session, [hostile, other, cited])
    with sessions.begin() as session:
        for record_id, record in records.claim_pending(session, "test", 10, 60):
            if record.trace_id in (HOSTILE_TRACE, OTHER_TENANT_TRACE):
                judgement = Judgement(judge.name, "ok", claims=claims, policy=policy)
                evaluations.save_evaluation(session, record_id, judgement)
            elif record.trace_id == CITED_TRACE:
                texts = [c.text for c in record.chunks]
                judged = judge.judge(record.question, texts, record.answer)
                evaluations.save_evaluation(session, record_id, judged)


@pytest.fixture(scope="module")
def served(module_database_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """The demo's store with hostile traces and three keys, served for the module's tests
    (they read; a login adds only a session of its own)."""
    with pytest.MonkeyPatch.context() as monkeypatch:
        yield from _served(module_database_url, tmp_path_factory.mktemp("dashboard"), monkeypatch)


def _served(database_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Served]:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("FAITHMON_DATABASE_URL", database_url)
    monkeypatch.setenv("FAITHMON_SCRUB_KEY", "dashboard-test-key-0123")
    # Thresholds from the false-alarm budget cost seconds per drift run on two cores
    # (exact run lengths per detector); the demo pins one, and so does this server for
    # the runs it makes when the stored one is stale.
    monkeypatch.setenv("FAITHMON_DRIFT_THRESHOLD", "15")
    # The demo and the server both run with the demo's domain severity rules, a judge
    # configuration of its own (its name carries their digest): the pages show the
    # demo's scores and the traces judged here beside them.
    monkeypatch.setenv("FAITHMON_SEVERITY_RULES", str(SEVERITY_RULES))
    # 400 requests: enough for every segment, chart and alert the pages show.
    demo = ["demo", "--requests", "400", "--output", str(tmp_path / "r.html")]
    demo += ["--database", database_url]
    result = CliRunner().invoke(main, demo)
    assert result.exit_code == 0, result.output
    settings = Settings.from_env()
    made = {}
    with wiring.open_store(settings) as sessions:
        judge = wiring.make_judge(settings)
        assert isinstance(judge, Checked) and isinstance(judge.inner, OfflineJudge)
        _hostile_records(sessions, judge)
        with sessions.begin() as session:
            for name, scopes, tenant in (
                ("admin", ["admin"], None),
                ("acme_reader", ["read"], "acme"),
                ("ingest_only", ["ingest"], None),
            ):
                key, prefix = new_key()
                store_keys.create_key(session, prefix, key_hash(key), scopes, tenant, name=name)
                made[name] = key
        auth = wiring.make_auth(settings, sessions, "127.0.0.1")
        pipeline = Pipeline(lambda batch: None, sampler=KeepAll(), scrubber=identity)
        reads = ReadOptions(drift=wiring.drift_config(settings))
        app = create_app(pipeline, sessions=sessions, auth=auth, reads=reads)
        with serve_in_thread(app) as url:
            yield Served(url, **made)


def _get(url: str, key: str | None = None) -> tuple[int, str, dict[str, str]]:
    headers = {"Accept": "text/html"}
    if key:
        headers["Authorization"] = f"Bearer {key}"
    status, body, got = send(url, headers=headers, timeout=10, follow_redirects=False)
    return status, body.decode(), dict(got)


PAGES = (
    "/",
    "/alerts",
    "/traces",
    "/documents",
    "/sentinels",
    "/judges",
    "/segments",
    "/segments/tenant=acme",
    f"/traces/{HOSTILE_TRACE}",
)


def test_pages_need_a_read_key_and_keep_tenants_apart(served: Served) -> None:
    for path in PAGES:
        status, _, headers = _get(served.url + path)
        assert status == 303 and headers["location"].startswith("/login?next=")
        assert _get(served.url + path, served.ingest_only)[0] == 403
        status, _, headers = _get(served.url + path, served.admin)
        assert status == 200
        assert "script-src 'self'" in headers["content-security-policy"]
        assert "unsafe-inline" not in headers["content-security-policy"]
    # Another tenant's trace is as absent as a trace never stored.
    other = f"{served.url}/traces/{OTHER_TENANT_TRACE}"
    assert _get(other, served.admin)[0] == 200
    assert _get(other, served.acme_reader)[0] == 404
    assert _get(f"{served.url}/traces/{'0' * 32}", served.acme_reader)[0] == 404
    for path in ("/", "/traces", "/documents"):
        status, body, _ = _get(served.url + path, served.acme_reader)
        assert status == 200 and "Globex" not in body and OTHER_TENANT_TRACE[:12] not in body
    assert _get(f"{served.url}/segments/tenant=acme", served.acme_reader)[0] == 200
    assert _get(f"{served.url}/segments/tenant=globex", served.acme_reader)[0] == 404
    _, segments, _ = _get(served.url + "/segments", served.acme_reader)
    assert "tenant=acme" in segments and "tenant=globex" not in segments
    _, listed, _ = _get(served.url + "/traces?label=route:secret", served.admin)
    assert OTHER_TENANT_TRACE[:12] in listed
    _, listed, _ = _get(served.url + "/traces?label=route:secret", served.acme_reader)
    assert OTHER_TENANT_TRACE[:12] not in listed and "No trace matches" in listed
    # key=value, as everywhere else, filters the same (key:value stays its alias).
    _, listed, _ = _get(served.url + "/traces?label=route%3Dsecret", served.admin)
    assert OTHER_TENANT_TRACE[:12] in listed and "label must be" not in listed
    # Drift runs per tenant: an acme reader sees acme's alerts and the judge's, never
    # another tenant's.
    _, alerts, _ = _get(served.url + "/alerts", served.acme_reader)
    assert "model=northwind-llm-1.1,tenant=acme" in alerts and "judge_drift" in alerts
    assert "tenant=globex" not in alerts and "tenant=initech" not in alerts
    _, everything, _ = _get(served.url + "/alerts", served.admin)
    assert "tenant=globex" in everything
    # The overview: every segment the reader may see, with its state and a sparkline.
    _, overview, _ = _get(served.url + "/", served.acme_reader)
    assert 'id="segments"' in overview and "tenant=globex" not in overview
    assert overview.count('<svg class="spark"') >= 2 and ">tenant=acme</a>" in overview
    _, admin, _ = _get(served.url + "/", served.admin)
    # Traffic split by tenant is charted per tenant, each against its own baseline.
    for tenant in ("acme", "globex", "initech"):
        assert f">tenant={tenant}</a>" in admin and f"<h3>tenant={tenant} " in admin
    assert "every tenant is compared with its own baseline" in admin
    # The contracts beside the score, served as escaped HTML.
    cited = f"{served.url}/traces/{CITED_TRACE}"
    _, page, _ = _get(cited, served.acme_reader)
    assert f'href="#trace-{CITED_TRACE}-chunk-2">[2]</a> — chunk 2 does not support' in page
    assert f'<li id="trace-{CITED_TRACE}-chunk-2">' in page
    assert f"<code>{escape(SECRET)}</code>" in page and SECRET not in page
    _, hostile, _ = _get(f"{served.url}/traces/{HOSTILE_TRACE}", served.admin)
    policy = hostile[hostile.index('<ul class="policy">') :]
    policy = policy[: policy.index("</ul>")]
    assert [f"<code>{escape(p)}</code>" in policy for p in PAYLOADS] == [True] * len(PAYLOADS)


@pytest.mark.browser
def test_the_dashboard_in_chromium(served: Served, chromium: str, tmp_path: Path) -> None:
    from playwright.sync_api import Dialog, Request, expect, sync_playwright

    elsewhere: list[str] = []
    dialogs: list[str] = []

    def note(request: Request) -> None:
        if not request.url.startswith(served.url):
            elsewhere.append(request.url)

    def dismiss(dialog: Dialog) -> None:
        dialogs.append(dialog.message)
        dialog.dismiss()

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, headless=True)
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.on("request", note)
        page.on("dialog", dismiss)
        page.goto(served.url + "/alerts")
        expect(page).to_have_url(f"{served.url}/login?next=/alerts")
        page.get_by_label("API key").fill("fm_00000000_wrong")
        page.get_by_role("button", name="Log in").click()
        expect(page.locator(".error")).to_contain_text("unknown or revoked")
        page.get_by_label("API key").fill(served.admin)
        page.get_by_role("button", name="Log in").click()
        expect(page).to_have_url(f"{served.url}/alerts")
        cookies = page.context.cookies()
        assert [c["httpOnly"] for c in cookies] == [True]
        assert [c["sameSite"] for c in cookies] == ["Strict"]
        assert served.admin not in json.dumps(cookies)

        # The alerts table fits its card, and an alert is acknowledged in the key's name.
        table = page.locator("table.alerts")
        assert table.evaluate("t => t.parentElement.scrollWidth <= t.parentElement.clientWidth")
        row = table.locator("tbody tr").filter(has=page.get_by_role("button", name="Acknowledge"))
        alert_id = row.first.locator("td").first.inner_text().lstrip("#")
        row.first.get_by_role("button", name="Acknowledge").click()
        expect(page).to_have_url(f"{served.url}/alerts#alert-{alert_id}")
        expect(page.locator(f"#alert-{alert_id} p.acked")).to_have_text(
            re.compile(r"^acknowledged by admin at \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC$")
        )
        acked = table.locator("tbody tr").filter(has=page.locator(f'a[href="#alert-{alert_id}"]'))
        expect(acked.get_by_role("button", name="Acknowledge")).to_have_count(0)
        # A trace id never breaks inside, even on a narrow screen.
        page.set_viewport_size({"width": 320, "height": 900})
        ids = page.locator("code.trace-id")
        assert ids.count() > 0
        assert ids.evaluate_all("all => all.every(e => e.getClientRects().length === 1)")
        page.set_viewport_size({"width": 1280, "height": 900})

        # Every page of the navigation renders under its own heading.
        for name in ("Segments", "Traces", "Documents", "Sentinels", "Judges", "Alerts"):
            page.get_by_role("link", name=name, exact=True).click()
            expect(page.get_by_role("heading", level=1, name=name)).to_be_visible()
        expect(page.locator("table").first).to_be_visible()
        page.get_by_role("link", name="Segments", exact=True).click()
        page.get_by_role("link", name="model=northwind-llm-1.1,tenant=acme").click()
        expect(page.get_by_role("heading", level=1)).to_contain_text("tenant=acme")
        expect(page.locator("svg.chart .marker").first).to_be_attached()
        page.get_by_role("link", name="Traces", exact=True).click()
        page.get_by_label("label").fill("tenant:acme")
        page.get_by_role("button", name="Filter").click()
        expect(page.locator("tbody tr").first).to_contain_text("tenant=acme")
        page.get_by_role("link", name="Documents", exact=True).click()
        expect(page.locator("main")).to_contain_text(f"doc {PAYLOADS[0]}")
        assert page.evaluate("typeof window.pwned") == "undefined"
        page.get_by_role("link", name="Overview").click()
        expect(page.get_by_role("heading", level=1, name="Overview")).to_be_visible()
        expect(page.locator("svg.chart").first).to_be_visible()
        expect(page.locator("table#segments svg.spark").first).to_be_visible()
        # A card's heading sits at its top, with no blank space above it.
        card = page.locator("section.card").filter(has=page.locator("table#segments"))
        gap = card.evaluate(
            "c => c.querySelector('h2').getBoundingClientRect().top - c.getBoundingClientRect().top"
        )
        assert gap < 24
        # The demo's judge proves itself on the starter sentinels (its standing is read
        # from what they measured, never a given).
        expect(page.locator("main")).to_contain_text("trusted by its sentinels")
        # README's screenshot is this page: FAITHMON_SCREENSHOTS=docs writes it there.
        shot = Path(os.environ.get("FAITHMON_SCREENSHOTS", tmp_path)) / "dashboard.png"
        page.screenshot(path=str(shot), full_page=False)
        assert shot.stat().st_size > 10_000
        page.get_by_role("link", name="open alerts").click()
        expect(page.locator("table.alerts")).to_be_visible()
        # From an alert's evidence to the trace's own page, claims marked on the chunks.
        page.locator("article.example h4 a").first.click()
        expect(page.get_by_role("heading", level=1, name="Trace")).to_be_visible()
        expect(page.locator("dd.answer mark").first).to_be_visible()
        expect(page.locator("section.card h2", has_text="Evaluations")).to_be_visible()

        page.goto(f"{served.url}/traces/{HOSTILE_TRACE}")
        for payload in PAYLOADS:
            expect(page.locator("dd.answer")).to_contain_text(payload)
        expect(page.locator(".chunk-text").first).to_contain_text(PAYLOADS[0])
        expect(page.locator("body")).to_contain_text("javascript:window.pwned")
        assert page.evaluate("typeof window.pwned") == "undefined"
        assert page.title().startswith("Trace ")
        assert page.locator("main img, main svg[onload], main a[href^=javascript]").count() == 0
        # Policy findings, a critical rule and a partial claim's missing part: text too.
        findings = page.locator("ul.policy li")
        expect(findings.locator("code")).to_have_text(list(PAYLOADS))
        expect(findings.locator(".flag")).to_have_text([f"rule {p}" for p in PAYLOADS])
        expect(page.locator("dd.answer mark.partial")).to_have_text("Refunds take 5 days.")
        expect(page.locator(".claims .missing")).to_have_text(f"missing: {PAYLOADS[1]}")
        expect(page.locator(".claims .flag.critical").first).to_have_text(
            f"critical: {PAYLOADS[3]}"
        )
        assert page.evaluate("typeof window.pwned") == "undefined"
        page.screenshot(path=str(tmp_path / "trace.png"), full_page=True)

        # A wrong citation is drawn on the answer and leads to the chunk it names.
        page.goto(f"{served.url}/traces/{CITED_TRACE}")
        wrong = page.locator("dd.answer mark.citation-wrong").first
        expect(wrong).to_have_text("Refunds take 5 days to reach your card [2]")
        assert wrong.evaluate("e => getComputedStyle(e).textDecorationStyle") == "wavy"
        cite_note = page.locator("dd.answer .cite-note").first
        expect(cite_note).to_have_text("cites [2] — chunk 2 does not support this")
        marked, noted = wrong.bounding_box(), cite_note.bounding_box()
        assert marked is not None and noted is not None
        # The note sits right after the claim it is about, on the answer itself.
        assert noted["x"] >= marked["x"] + marked["width"] - 1
        assert abs(noted["y"] - marked["y"]) < marked["height"]
        named = page.locator(f"#trace-{CITED_TRACE}-chunk-2")
        expect(named.locator(".chunk-text")).to_have_text(CITED_CHUNKS[1])
        expect(named.locator(".cited-wrong")).to_have_text(
            "cited by claim 1, which it does not support"
        )
        cite_note.get_by_role("link", name="[2]").click()
        expect(page).to_have_url(f"{served.url}/traces/{CITED_TRACE}#trace-{CITED_TRACE}-chunk-2")
        expect(named).to_be_in_viewport()
        outline = named.locator(".chunk-text").evaluate("e => getComputedStyle(e).outlineStyle")
        assert outline == "solid"
        expect(page.locator("p.citations")).to_contain_text(
            "1 citation marker names no chunk the generator was given"
        )
        expect(page.locator(".claims .citation.unresolved")).to_have_text(
            ["cites no chunk it was given"]
        )
        expect(page.locator(".claims li").nth(1)).to_contain_text("critical: misquote")
        expect(page.locator(".claims li").nth(4)).to_contain_text("cites nothing")
        expect(page.locator("ul.policy code")).to_have_text([SECRET])
        expect(page.locator("section.card table")).to_contain_text("0.25 · 1 unresolved")
        assert page.locator("main img").count() == 0
        assert page.evaluate("typeof window.pwned") == "undefined"
        page.screenshot(path=str(tmp_path / "cited.png"), full_page=True)

        page.get_by_role("button", name="Log out").click()
        expect(page).to_have_url(f"{served.url}/login")
        page.goto(served.url + "/")
        expect(page).to_have_url(f"{served.url}/login?next=/")
        browser.close()
    assert elsewhere == [] and dialogs == []
