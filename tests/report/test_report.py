"""The HTML report: its data from the store, its rendering, and the page in a real Chromium."""

from __future__ import annotations

import json
import struct
import xml.etree.ElementTree as ET
import zlib
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from html import escape
from html.parser import HTMLParser
from pathlib import Path

import pytest
from click.testing import CliRunner
from sqlalchemy.orm import Session, sessionmaker

from faithmon.cli import main
from faithmon.judge import OfflineJudge
from faithmon.model import (
    Alert,
    Chunk,
    Claim,
    Judgement,
    PolicyFinding,
    RagRecord,
    StoredRecord,
    segment_key,
    segment_name,
)
from faithmon.report import render_report
from faithmon.report.chart import FEW, Band, Marker, render_chart
from faithmon.report.sparkline import render_sparkline
from faithmon.store import alerts as store_alerts
from faithmon.store import evaluations as store_evaluations
from faithmon.store import records as store_records
from faithmon.store.report import Bucket, ReportData, Series, floor_time, load_report
from tests.demo_run import DemoRun
from tests.store.factory import stored_records

JUDGE = OfflineJudge().name
T0 = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
WIDTH = timedelta(minutes=10)
SVG = "{http://www.w3.org/2000/svg}"
HOSTILE = '<script>window.pwned = 1</script><img src="https://evil.example/x.png">'


class Page(HTMLParser):
    """Collects every <mark> (class, text, classes of its ancestors) and every attribute."""

    VOID = frozenset("area base br col embed hr img input link meta source track wbr".split())

    def __init__(self, html: str) -> None:
        super().__init__()
        self.stack: list[tuple[str, str]] = []
        self.marks: list[tuple[str, str, list[str]]] = []
        self.tags: list[str] = []
        self.attributes: list[str] = []
        self.feed(html)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self.attributes += [name for name, _ in attrs]
        if tag in self.VOID:
            return
        css = dict(attrs).get("class") or ""
        if tag == "mark":
            self.marks.append((css, "", [c for _, c in self.stack]))
        self.stack.append((tag, css))

    def handle_endtag(self, tag: str) -> None:
        while self.stack:
            if self.stack.pop()[0] == tag:
                break

    def handle_data(self, data: str) -> None:
        if self.stack and self.stack[-1][0] == "mark":
            css, text, ancestors = self.marks[-1]
            self.marks[-1] = (css, text + data, ancestors)


def example(
    answer: str = "Refunds take 5 business days. Refunds reach you within 24 hours.",
    chunk_text: str = "Refunds are sent within 5 business days of the request.",
    chunk_id: str = "billing/refunds",
) -> StoredRecord:
    record = RagRecord(
        trace_id="a" * 32,
        question="How long do refunds take?",
        answer=answer,
        chunks=(
            Chunk(0, "Invoices are issued monthly.", id="billing/invoices", score=0.4),
            Chunk(1, chunk_text, id=chunk_id, score=0.9),
        ),
        labels={"model": "m2", "route": "billing"},
        started_at=T0 + 45 * timedelta(minutes=1),
    )
    claims = (
        Claim(
            "Refunds take 5 business days.", "supported", chunk=1, quote="within 5 business days"
        ),
        Claim("Refunds reach you within 24 hours.", "unsupported"),
    )
    return StoredRecord(1, record, "scored", (Judgement(JUDGE, "ok", claims),))


def drift_alert(segment: dict[str, str], examples: list[str], alert_id: int = 1) -> Alert:
    return Alert(
        id=alert_id,
        rule="faithfulness_drift",
        segment=segment,
        state="firing",
        severity="critical",
        opened_at=T0 + timedelta(minutes=50),
        updated_at=T0 + timedelta(minutes=55),
        details={
            "baseline_rate": 0.05,
            "baseline_records": 400,
            "baseline_source": "overall",
            "current_rate": 0.42,
            "current_interval": [0.31, 0.54],
            "records": 60,
            "unsupported": 25,
            "statistic": 21.3,
            "threshold": 15.0,
            "change_at": (T0 + timedelta(minutes=32)).isoformat(),
            "examples": [{"trace_id": t, "unsupported_claims": ["x"]} for t in examples],
        },
    )


def report_data(alerts: tuple[Alert, ...], traces: dict[str, StoredRecord]) -> ReportData:
    buckets = tuple(Bucket(T0 + i * WIDTH, 20, 1 + 3 * i) for i in range(6))
    segments = [{}, *(dict(a.segment) for a in alerts if "model" in a.segment)]
    return ReportData(
        judge=JUDGE,
        generated_at=T0 + timedelta(hours=1),
        bucket=WIDTH,
        series=tuple(Series(s, buckets, (400, 20)) for s in segments),
        alerts=alerts,
        traces=traces,
        baselines={"": (400, 20)},
    )


def test_text_from_the_app_is_shown_as_text_never_as_markup() -> None:
    """Script, image and attribute injections in every user-supplied field come out escaped."""
    stored = example(
        answer=f"Refunds take 5 business days. {HOSTILE}",
        chunk_text=f"Refunds are sent within 5 business days. {HOSTILE}",
        chunk_id='x" onmouseover="alert(1)',
    )
    hostile_segment = {"model": '<b onclick="alert(1)">m2</b>'}
    html = render_report(
        report_data((drift_alert(hostile_segment, [stored.record.trace_id]),), {"a" * 32: stored})
    )
    page = Page(html)
    assert "script" not in page.tags and "img" not in page.tags and "b" not in page.tags
    assert not [name for name in page.attributes if name.startswith("on")]
    assert html.count("&lt;script&gt;window.pwned = 1&lt;/script&gt;") == 2
    # The segment is named as people read it (unescaped), and escaped as HTML.
    assert "model=&lt;b onclick=&quot;alert(1)&quot;&gt;m2&lt;/b&gt;" in html


def test_unsupported_claims_are_marked_in_the_answer_and_evidence_in_its_chunk() -> None:
    """The answer marks what the judge found unsupported; the chunk marks the cited quote."""
    stored = example()
    page = Page(
        render_report(report_data((drift_alert({"model": "m2"}, ["a" * 32]),), {"a" * 32: stored}))
    )
    claims = stored.evaluations[0].claims
    in_answer = [(css, text) for css, text, up in page.marks if "answer" in up]
    in_chunks = [(css, text) for css, text, up in page.marks if "chunk-text" in up]
    assert in_answer == [("unsupported", claims[1].text)]
    assert in_chunks == [("evidence", claims[0].quote)]


def test_the_contracts_are_drawn_on_the_example_trace() -> None:
    """A wrong citation is marked on the answer with a link to the chunk it names; the
    partial claim, the critical rule, unresolved markers and policy findings show too."""
    stored = example(answer="Refunds take 5 business days [1]. Refunds reach you within 24 hours.")
    claims = (
        Claim(
            "Refunds take 5 business days.",
            "supported",
            chunk=1,
            quote="within 5 business days",
            critical=True,
            critical_rule="duration",
            citations=(0,),
            citation="wrong",
        ),
        Claim("Refunds reach you within 24 hours.", "partial", chunk=1, missing="24 hours"),
    )
    judgement = Judgement(
        JUDGE, "ok", claims, unresolved_citations=2, policy=(PolicyFinding("secret", HOSTILE),)
    )
    stored = replace(stored, evaluations=(judgement,))
    html = render_report(
        report_data((drift_alert({"model": "m2"}, ["a" * 32]),), {"a" * 32: stored})
    )
    page = Page(html)
    in_answer = [(css, text) for css, text, up in page.marks if "answer" in up]
    assert in_answer == [
        ("citation-wrong", "Refunds take 5 business days [1]"),
        ("partial", "Refunds reach you within 24 hours."),
    ]
    anchor = f"trace-{'a' * 32}-chunk-1"
    assert (
        f'<span class="cite-note">cites <a href="#{anchor}">[1]</a> — chunk 1 does not '
        "support this</span>"
    ) in html
    assert html.count(f'<li id="{anchor}">') == 1
    assert '<span class="flag critical">critical: duration</span>' in html
    assert '<span class="missing">missing: 24 hours</span>' in html
    assert "2 citation markers name no chunk the generator was given" in html
    assert "script" not in page.tags and "img" not in page.tags
    assert f"<code>{escape(HOSTILE)}</code>" in html


def test_a_trace_shared_by_two_alerts_is_shown_once() -> None:
    """The second alert links to the first one's copy of the trace instead of repeating it."""
    stored = example()
    alerts = (
        drift_alert({"model": "m2"}, ["a" * 32], 1),
        drift_alert({"route": "billing"}, ["a" * 32], 2),
    )
    html = render_report(report_data(alerts, {"a" * 32: stored}))
    assert html.count(f'id="trace-{"a" * 32}"') == 1
    assert f'href="#trace-{"a" * 32}"' in html


def test_a_trace_gone_from_the_store_shows_what_the_alert_recorded() -> None:
    """Retention may delete an example; its unsupported claims from the alert still show."""
    html = render_report(report_data((drift_alert({"model": "m2"}, ["b" * 32]),), {}))
    assert "no longer stored" in html and "<li>x</li>" in html


def test_judge_drift_and_unknown_rules_show_their_figures() -> None:
    """A sentinel run's figures and a future rule's details are listed; neither has a chart."""
    sentinel = Alert(
        rule="judge_drift",
        segment={"judge": JUDGE, "sentinel": "core"},
        state="firing",
        severity="critical",
        opened_at=T0,
        updated_at=T0,
        details={"version": "v1abc", "direction": "lenient", "accuracy": 0.625, "miss_rate": 0.5},
        id=1,
    )
    silent = Alert(
        rule="no_data",
        segment={"route": "returns"},
        state="pending",
        severity="warning",
        opened_at=T0,
        updated_at=T0,
        details={"silent_hours": 7.5, "last_at": T0.isoformat()},
        id=2,
    )
    html = render_report(report_data((sentinel, silent), {}))
    assert "Sentinel figures" in html and "lenient" in html and "0.625" in html
    assert "silent hours" in html and "7.5" in html and f"{T0:%Y-%m-%d %H:%M:%S} UTC" in html
    assert html.count('<svg class="chart"') == 1  # the overall segment only


def test_an_acknowledged_alert_says_who_and_when() -> None:
    """Its card says "acknowledged by NAME at TIME" and its row names who; a report offers
    no button, and says nothing of an alert nobody took."""
    taken = replace(
        drift_alert({"model": "m2"}, [], 1),
        details={
            **drift_alert({}, []).details,
            "acked_by": "Ann <b>",
            "acked_at": (T0 + timedelta(hours=2)).isoformat(),
        },
    )
    html = render_report(report_data((taken, drift_alert({"route": "b"}, [], 2)), {}))
    assert html.count("acknowledged by Ann &lt;b&gt; at 2026-03-01 11:00:00 UTC") == 1
    row = html[html.index('<a href="#alert-1">#1</a>') :]
    assert "Ann &lt;b&gt; " in row[: row.index("</tr>")]
    assert "acknowledged by" not in html[html.index('id="alert-2"') :]
    assert "<form" not in html and "acked_by" not in html


def test_an_alerts_details_read_as_words() -> None:
    """Details beyond the card's own places carry plain names; yes or no, never Python's."""
    details = {
        **drift_alert({}, []).details,
        "recent_interval": [0.2805, 0.5078],
        "recovered": False,
        "sentinel_status": {"judge": JUDGE, "trusted": True},
    }
    alert = replace(drift_alert({"model": "m2"}, []), details=details)
    html = render_report(report_data((alert,), {}))
    for said in ("recent rate (95%)", "28.1%–50.8%", "recent rate back near the baseline"):
        assert said in html
    assert "trusted: yes" in html and ">no</dd>" in html
    assert "Other details" not in html and "False" not in html and "true" not in html


def test_chart_draws_a_thin_bucket_hollow_and_the_axis_ignores_it() -> None:
    """A bucket of 2 answers (both unsupported) is a hollow point joined by dotted lines,
    and the axis stays scaled to the buckets of 20: their rates are not squeezed flat."""
    buckets = [Bucket(T0 + i * WIDTH, 20, 2 + i) for i in range(5)]
    buckets[2] = Bucket(T0 + 2 * WIDTH, FEW - 8, FEW - 8)
    root = ET.fromstring(render_chart("c", "a segment", buckets, WIDTH, None))
    dots = by_class(root, "dot")
    assert ["few" in (d.get("class") or "") for d in dots] == [False, False, True, False, False]
    assert len(by_class(root, "gap")) == 2  # to the thin point and from it
    ticks = [t.text or "" for t in by_class(root, "tick") if (t.text or "").endswith("%")]
    assert ticks[-1] == "60%"  # the buckets of 20 and their intervals, not the thin 100%
    assert "fewer than 10 answers" in render_report(report_data((), {}))  # the legend says so


def test_a_sparkline_merges_a_thin_bucket_into_its_neighbour() -> None:
    """A bucket of a few answers is no point of its own: it joins the next one (a last
    one joins the one before), so its 0% or 100% never makes a spike."""
    span = (T0, T0 + 4 * WIDTH)
    thin = Bucket(T0 + WIDTH, 1, 1)
    for buckets in (
        [Bucket(T0, 20, 1), thin, Bucket(T0 + 2 * WIDTH, 20, 1)],
        [Bucket(T0, 20, 1), Bucket(T0 + 2 * WIDTH, 20, 1), Bucket(T0 + 3 * WIDTH, 1, 1)],
    ):
        svg = ET.fromstring(render_sparkline("s", buckets, span, WIDTH, 0.05))
        (line,) = svg.iter(f"{SVG}polyline")
        assert len(line.get("points", "").split()) == 2
        assert "3 of 41 scored answers unsupported" in "".join(svg.itertext())


def chart(markers: list[Marker], skip: int | None = None) -> ET.Element:
    buckets = [Bucket(T0 + i * WIDTH, 20, 1 + 3 * i) for i in range(6) if i != skip]
    svg = render_chart("c", "a segment", buckets, WIDTH, Band(0.05, 0.02, 0.11), markers)
    return ET.fromstring(svg)


def by_class(root: ET.Element, css: str) -> list[ET.Element]:
    return [e for e in root.iter() if css in (e.get("class") or "").split()]


def test_chart_draws_the_baseline_band_around_its_line() -> None:
    """The band spans the baseline's interval, with the baseline rate inside it."""
    root = chart([])
    (band,) = by_class(root, "band")
    (line,) = by_class(root, "baseline")
    top, height = float(band.get("y", "")), float(band.get("height", ""))
    assert height > 0 and top < float(line.get("y1", "")) < top + height


def test_chart_places_alert_markers_in_time_and_labels_them() -> None:
    """A change point between two buckets is drawn between their dots, with rule and state."""
    change = Marker(T0 + timedelta(minutes=32), "faithfulness_drift", "firing", "change point")
    opened = Marker(T0 + timedelta(minutes=50), "faithfulness_drift", "firing", "opened")
    root = chart([change, opened])
    dots = [float(c.get("cx", "")) for c in by_class(root, "dot")]
    markers = by_class(root, "marker")
    assert len(dots) == 6 and len(markers) == 2
    first = markers[0]
    x = float(first.findall(f"{SVG}line")[0].get("x1", ""))
    assert dots[2] < x < dots[3]
    label = "".join(t for e in first.iter(f"{SVG}text") for t in e.itertext())
    assert "faithfulness_drift" in label and "firing" in label and "change point" in label
    assert "firing" in (first.get("class") or "")


def test_chart_marks_a_gap_where_a_bucket_has_no_records() -> None:
    """Buckets either side of an empty one are joined by a dashed gap line, not the rate line."""
    root = chart([], skip=3)
    assert len(by_class(root, "dot")) == 5 and len(by_class(root, "gap")) == 1


def seed(sessions: sessionmaker[Session]) -> tuple[list[RagRecord], Alert]:
    """Twelve scored records over two hours (model m2 from the second hour) and an alert."""
    records = [
        RagRecord(
            trace_id=f"{i:032x}",
            question=f"question {i}",
            answer=f"Answer {i}. Invented fact {i}.",
            chunks=(Chunk(0, f"Answer {i}. Nothing else.", id=f"doc-{i}"),),
            labels={"model": "m2" if i >= 6 else "m1"},
            started_at=T0 + i * timedelta(minutes=10),
        )
        for i in range(12)
    ]
    with sessions() as session, session.begin():
        store_records.save_records(session, records, T0 + timedelta(hours=2))
    with sessions() as session, session.begin():
        ids = {s.record.trace_id: s.id for s in stored_records(session, limit=100)}
        for i, record in enumerate(records):
            claims = [Claim(f"Answer {i}.", "supported", chunk=0, quote=f"Answer {i}")]
            if i % 3 == 0:
                claims.append(Claim(f"Invented fact {i}.", "unsupported"))
            store_evaluations.save_evaluation(
                session, ids[record.trace_id], Judgement(JUDGE, "ok", tuple(claims))
            )
        (alert,) = store_alerts.save_alerts(
            session,
            [
                replace(drift_alert({"model": "m2"}, [records[9].trace_id]), id=None),
                Alert(
                    rule="judge_drift",
                    segment={"judge": JUDGE, "sentinel": "core"},
                    state="resolved",
                    severity="critical",
                    opened_at=T0,
                    updated_at=T0,
                ),
            ],
        )[:1]
    return records, alert


def test_load_report_counts_scored_records_per_segment_and_bucket(
    sessions: sessionmaker[Session],
) -> None:
    """Buckets add up to the scored records of each charted segment; examples come whole."""
    records, alert = seed(sessions)
    with sessions() as session:
        data = load_report(session, JUDGE, target_buckets=6)
    assert [dict(s.segment) for s in data.series] == [{}, {"model": "m2"}]
    overall, model = data.series
    assert (overall.records, overall.unsupported) == (12, 4)
    assert (model.records, model.unsupported) == (6, 2)
    assert all(floor_time(b.start, data.bucket) == b.start for b in overall.buckets)
    assert len(overall.buckets) <= 6
    assert [a.rule for a in data.alerts] == ["faithfulness_drift", "judge_drift"]
    example = data.traces[records[9].trace_id]
    assert example.record.chunks == records[9].chunks
    assert [c.verdict for c in example.evaluations[0].claims] == ["supported", "unsupported"]
    assert segment_key(alert.segment) == "model=m2"


def test_report_command_writes_the_page(
    database_url: str,
    sessions: sessionmaker[Session],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`faithmon report --out` writes the report of the configured database."""
    records, _ = seed(sessions)
    monkeypatch.setenv("FAITHMON_DATABASE_URL", database_url)
    out = tmp_path / "r.html"
    result = CliRunner().invoke(main, ["report", "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert result.stdout == f"report: {out}\n"
    page = Page(out.read_text(encoding="utf-8"))
    assert any(
        css == "unsupported" and text == records[9].answer.split(" ", 2)[2] and "answer" in up
        for css, text, up in page.marks
    )


def png_size(data: bytes) -> tuple[int, int, int]:
    """Width, height and how many distinct byte values the decoded pixels hold."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    pixels, at = b"", 8
    while at < len(data):
        (length,) = struct.unpack(">I", data[at : at + 4])
        if data[at + 4 : at + 8] == b"IDAT":
            pixels += data[at + 8 : at + 8 + length]
        at += 12 + length
    return width, height, len(set(zlib.decompress(pixels)))


@pytest.mark.browser
def test_demo_report_in_chromium(
    chromium: str, demo_run: DemoRun, demo_copy: Path, tmp_path: Path
) -> None:
    """The demo's report opens offline and shows charts, markers, alerts and marked claims."""
    from playwright.sync_api import Route, expect, sync_playwright

    runner = CliRunner()
    report = demo_run.report
    assert demo_run.stdout.endswith(f"report: {report}\n")
    alerts = json.loads(runner.invoke(main, ["alerts", "list", "--json"]).stdout)
    firing = [a for a in alerts if a["state"] == "firing"]
    assert firing, "the demo raises at least one firing alert"

    requested: list[str] = []

    def block(route: Route) -> None:
        if route.request.url == report.as_uri():
            route.continue_()
        else:
            requested.append(route.request.url)
            route.abort()

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, headless=True)
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.route("**/*", block)
        page.goto(report.as_uri())
        expect(page).to_have_title("faithmon report")
        expect(page.get_by_role("heading", level=1, name="faithmon report")).to_be_visible()
        assert {a["rule"] for a in firing} >= {"faithfulness_drift", "judge_drift"}
        for alert in firing:
            segment = segment_name(alert["segment"], "")
            expect(
                page.locator("table.alerts tr")
                .filter(has_text=alert["rule"])
                .filter(has_text=segment)
            ).to_be_visible()
            if "current_rate" not in alert["details"]:
                continue  # a judge-drift alert has sentinel figures, not a rate over time
            card = page.locator("section.chart-card").filter(
                has=page.get_by_role("heading", level=3, name=segment)
            )
            svg = card.locator("svg.chart")
            expect(svg).to_be_visible()
            box = svg.bounding_box()
            assert box is not None and box["width"] > 300 and box["height"] > 100
            expect(svg.locator(".marker text").filter(has_text=alert["rule"]).first).to_be_visible()
        claims = {
            c
            for a in firing
            for e in a["details"].get("examples", ())
            for c in e["unsupported_claims"]
        }
        mark = page.locator("dd.answer mark.unsupported").first
        expect(mark).to_be_visible()
        assert mark.inner_text() in claims
        shot = tmp_path / "report.png"
        page.screenshot(path=str(shot), full_page=True)
        browser.close()
    assert requested == []
    width, height, values = png_size(shot.read_bytes())
    assert width >= 1280 and height > 1500 and values > 50


@pytest.mark.browser
def test_hostile_text_stays_text_in_chromium(chromium: str, tmp_path: Path) -> None:
    """A <script> in an answer or chunk is shown as text: it neither runs nor fetches."""
    from playwright.sync_api import expect, sync_playwright

    stored = example(
        answer=f"Refunds take 5 business days. {HOSTILE}",
        chunk_text=f"Refunds are sent within 5 business days. {HOSTILE}",
    )
    path = tmp_path / "hostile.html"
    path.write_text(
        render_report(report_data((drift_alert({"model": "m2"}, ["a" * 32]),), {"a" * 32: stored})),
        encoding="utf-8",
    )
    requested: list[str] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, headless=True)
        page = browser.new_page()
        page.on("request", lambda request: requested.append(request.url))
        page.goto(path.as_uri())
        expect(page.locator("dd.answer")).to_contain_text(HOSTILE)
        expect(page.locator(".chunk-text").nth(1)).to_contain_text(HOSTILE)
        assert page.evaluate("typeof window.pwned") == "undefined"
        assert page.locator("img").count() == 0
        browser.close()
    assert requested == [path.as_uri()]
