"""The read API's other nouns over real HTTP on SQLite and PostgreSQL: drift segments and
their series, alerts, documents worst first, sentinel runs, judges, and the /docs page."""

from __future__ import annotations

import re
from datetime import UTC, datetime

import pytest

from faithmon.api.app import create_app
from faithmon.api.v1 import ReadOptions
from faithmon.api.v1.segments import parse_segment
from faithmon.drift import wilson_interval
from faithmon.ingest.pipeline import Pipeline
from faithmon.ingest.sampler import KeepAll
from faithmon.ingest.scrub import identity
from faithmon.model import Usage
from faithmon.store import Sessions, work
from tests.api.client import call, every_page, get
from tests.api.seed import (
    ALERTS,
    JUDGE,
    OTHER_JUDGE,
    RECORDS,
    Seeded,
    judgement_of,
    make_record,
    rescored,
    shown,
)
from tests.servers import serve_in_thread


def test_segments_show_each_detector_as_drift_status_does(api: Seeded) -> None:
    """Each segment's detectors carry baseline, current rate in its interval, CUSUM,
    threshold and state; overall comes first."""
    segments = get(api.url, "/api/v1/segments", api.keys["admin"])
    assert segments["judge"] == JUDGE and segments["baseline_ready"]
    names = [s["segment"] for s in segments["items"]]
    assert names[0] == "overall"
    places = [(s["labels"].get("tenant", ""), len(s["labels"])) for s in segments["items"]]
    assert places == sorted(places)
    assert {"tenant=acme", "tenant=globex"} <= set(names)
    for item in segments["items"]:
        assert parse_segment(item["segment"]) == item["labels"]
        assert {d["stream"] for d in item["detectors"]} == {"unsupported", "critical"}
        for d in item["detectors"]:
            low, high = d["current_interval"]
            assert low <= d["current_rate"] <= high
            assert d["threshold"] == 4.0 and d["cusum"] >= 0
            assert d["state"] in ("ok", "pending", "firing", "folded", "explained")
        states = {d["state"] for d in item["detectors"]}
        assert item["state"] in states


def _scored_in(labels: dict[str, str]) -> list[int]:
    """The records the watched judge scored (ok), in a segment."""
    return [
        n
        for n in range(RECORDS)
        if (j := judgement_of(n)) is not None
        and j.status == "ok"
        and all(make_record(n).labels.get(k) == v for k, v in labels.items())
    ]


@pytest.mark.parametrize("segment", ["overall", "route=billing", "route=search,tenant=acme"])
@pytest.mark.parametrize("bucket", ["hour", "day"])
def test_a_series_counts_the_segments_scored_records_per_bucket(
    api: Seeded, segment: str, bucket: str
) -> None:
    """Buckets add up to the segment's scored records, each rate with its interval."""
    series = get(api.url, f"/api/v1/segments/{segment}/series", api.keys["admin"], bucket=bucket)
    labels = parse_segment(segment)
    assert labels is not None and series["labels"] == labels and series["bucket"] == bucket
    scored = _scored_in(labels)
    assert sum(b["records"] for b in series["buckets"]) == len(scored)
    bad = [n for n in scored if judgement_of(n).unsupported]  # type: ignore[union-attr]
    assert sum(b["unsupported"] for b in series["buckets"]) == len(bad)
    starts = [datetime.fromisoformat(b["start"]) for b in series["buckets"]]
    assert starts == sorted(starts)
    for start, b in zip(starts, series["buckets"], strict=True):
        assert (start.minute, start.second) == (0, 0)
        assert bucket == "hour" or start.hour == 0
        low, high = wilson_interval(b["unsupported"], b["records"])
        assert b["interval"] == [round(low, 4), round(high, 4)]
    assert series["baseline"] is not None and series["baseline"]["records"] > 0


@pytest.mark.parametrize(
    "segment", ["model=none", "route", "route=billing,route=search", "=x", "tenant=acme,"]
)
def test_an_unknown_or_malformed_segment_is_404(api: Seeded, segment: str) -> None:
    """A segment with no records and no baseline, or one that names nothing, is 404."""
    status, body, _ = call(api.url, f"/api/v1/segments/{segment}/series", api.keys["admin"])
    assert status == 404 and body == {"detail": "no such segment"}


def test_a_bad_bucket_is_422(api: Seeded) -> None:
    status, _, _ = call(
        api.url, "/api/v1/segments/overall/series", api.keys["admin"], bucket="week"
    )
    assert status == 422


def test_alerts_are_newest_first_with_their_evidence(api: Seeded) -> None:
    """Pages of alerts cover them all newest first; one alert carries what it says."""
    items = every_page(api.url, "/api/v1/alerts", api.keys["admin"], 3)
    assert [a["id"] for a in items] == sorted(api.alerts.values(), reverse=True)
    alert = get(api.url, f"/api/v1/alerts/{api.alerts['acme_billing']}", api.keys["admin"])
    rule, segment, state = ALERTS["acme_billing"]
    assert (alert["rule"], alert["labels"], alert["state"]) == (rule, segment, state)
    assert alert["segment"] == "route=billing,tenant=acme"
    assert alert["details"]["current_rate"] == 0.4 and "40.0%" in alert["summary"]
    resolved = every_page(api.url, "/api/v1/alerts", api.keys["admin"], 50, state="resolved")
    assert [a["id"] for a in resolved] == [api.alerts["acme_old"]]
    assert resolved[0]["resolved_at"] is not None
    by_rule = every_page(api.url, "/api/v1/alerts", api.keys["admin"], 50, rule="no_data")
    assert [a["id"] for a in by_rule] == [api.alerts["globex_search"]]


@pytest.mark.parametrize("path", ["/api/v1/alerts/9999", "/api/v1/alerts/9999/ack"])
def test_an_unknown_alert_is_404(api: Seeded, path: str) -> None:
    status, body, _ = call(
        api.url, path, api.keys["admin"], "POST" if path.endswith("ack") else "GET"
    )
    assert status == 404 and body == {"detail": "no such alert"}


def test_documents_are_worst_first_with_the_claims_they_contradict(api: Seeded) -> None:
    """Each document's share of unsupported answers is right, the worst lead, and the
    claims citing a document as contradicted are listed with it."""
    documents = every_page(api.url, "/api/v1/documents", api.keys["admin"], 5)
    ids = [d["id"] for d in documents]
    assert len(ids) == len(set(ids)) == 3 * 4 + 3  # per owner: doc-0..3 and a faq
    lows = [d["unsupported_interval"][0] if d["scored"] else 0 for d in documents]
    assert lows == sorted(lows, reverse=True)
    faq = next(d for d in documents if d["id"] == "acme-faq")
    acme = [n for n in range(RECORDS) if make_record(n).labels.get("tenant") == "acme"]
    # Newest evaluation shown: a record the second judge rescored counts as supported.
    scored = [n for n in acme if (s := shown(n)) is not None and s.faithfulness is not None]
    bad = [n for n in scored if shown(n).faithfulness < 1]  # type: ignore[union-attr,operator]
    assert (faq["passed"], faq["scored"], faq["unsupported"]) == (len(acme), len(scored), len(bad))
    assert faq["unsupported_share"] == round(len(bad) / len(scored), 4)
    contradicted = [
        n
        for n in acme
        if not rescored(n)
        and (j := judgement_of(n)) is not None
        and any(c.verdict == "contradicted" for c in j.claims)
    ]
    assert faq["contradicted"] == len(contradicted)
    assert len(faq["contradicted_claims"]) == 3
    assert {c["text"] for c in faq["contradicted_claims"]} == {"It costs 40 euros."}
    assert all(d["contradicted"] == 0 for d in documents if not d["id"].endswith("faq"))
    by_judge = every_page(api.url, "/api/v1/documents", api.keys["admin"], 50, judge=OTHER_JUDGE)
    assert all(d["unsupported"] == 0 for d in by_judge)


def test_sentinel_runs_are_newest_first_with_judge_trust(api: Seeded) -> None:
    """Runs carry their set, judge and result; distrusted judges are listed."""
    runs = every_page(api.url, "/api/v1/sentinels", api.keys["admin"], 1)
    assert [(r["judge"], r["state"]) for r in runs] == [(OTHER_JUDGE, "drift"), (JUDGE, "good")]
    assert runs[0]["set"] == "starter" and runs[0]["accuracy"] == 0.9
    page = get(api.url, "/api/v1/sentinels", api.keys["admin"], judge=JUDGE)
    assert [r["judge"] for r in page["items"]] == [JUDGE]
    (trust,) = page["trust"]
    assert (trust["judge"], trust["trusted"]) == (OTHER_JUDGE, False)


def test_judges_show_usage_blocks_and_budget(api: Seeded) -> None:
    """Each judge configuration with its usage per day, block and trust; budget left."""
    judges = get(api.url, "/api/v1/judges", api.keys["admin"])
    assert judges["budget"] == {
        "known": True,
        "daily_tokens": 1000,
        "spent_today": 120,
        "left_today": 880,
    }
    current, other = judges["items"]
    assert (current["judge"], current["configured"], current["blocked"]) == (JUDGE, True, None)
    assert current["tokens_today"] == 120 and current["trusted"]
    assert [u["calls"] for u in current["usage"]] == [3, 5]  # newest day first
    assert other["judge"] == OTHER_JUDGE and not other["trusted"]
    assert other["blocked"]["reason"] == "401 from the judge endpoint"


def test_judges_cost_their_tokens_at_the_prices(api: Seeded) -> None:
    """Each day costs its prompt and completion tokens at the configured prices (10 and 30
    dollars per million); a judge that spent nothing costs 0; the page shows the same."""
    judges = get(api.url, "/api/v1/judges", api.keys["admin"])
    assert judges["prices"] == {"input_per_million_usd": 10.0, "output_per_million_usd": 30.0}
    current, other = judges["items"]
    # Today 100 prompt + 20 completion tokens, yesterday 300 + 50 (seed.py).
    assert [u["cost_usd"] for u in current["usage"]] == pytest.approx([0.0016, 0.0045])
    assert current["total_cost_usd"] == pytest.approx(0.0061)
    assert other["usage"] == [] and other["total_cost_usd"] == 0.0
    status, page, _ = call(api.url, "/judges", api.keys["admin"])
    assert status == 200 and "<th>cost, 7 days</th>" in page
    assert "120 tokens ($0.0016)" in page and "350 tokens ($0.0045)" in page
    assert "<td>$0.0061</td>" in page and "<td>$0.0000</td>" in page
    assert "$10 per million prompt tokens" in page and "FAITHMON_JUDGE_PRICE" not in page


def test_judges_without_prices_show_no_cost(sessions: Sessions) -> None:
    """Unset prices give null costs and a hint on the page, never a cost of 0; the judge's
    name from the store stays text on the page."""
    hostile = "openai/<script>alert(1)</script>"
    with sessions.begin() as session:
        work.add_usage(session, hostile, Usage(2, 1000, 500), datetime.now(UTC))
    pipeline = Pipeline(lambda batch: None, sampler=KeepAll(), scrubber=identity)
    with serve_in_thread(create_app(pipeline, sessions=sessions)) as url:
        judges = get(url, "/api/v1/judges")
        (item,) = judges["items"]
        assert [u["cost_usd"] for u in item["usage"]] == [None]
        assert item["total_cost_usd"] is None
        assert judges["prices"] == {"input_per_million_usd": None, "output_per_million_usd": None}
        status, page, _ = call(url, "/judges")
    assert status == 200 and "$" not in page
    assert 'title="set FAITHMON_JUDGE_PRICE_INPUT/OUTPUT">—</span>' in page
    assert "<script>alert" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    # Half a price is no price: the bill would leave out the other half.
    half = ReadOptions(price_input=10)
    with serve_in_thread(create_app(pipeline, sessions=sessions, reads=half)) as url:
        assert get(url, "/api/v1/judges")["items"][0]["total_cost_usd"] is None


def test_docs_is_a_page_of_the_spec_without_script(api: Seeded) -> None:
    """/docs lists every operation and schema of /openapi.json, and runs nothing."""
    status, page, headers = call(api.url, "/docs", api.keys["acme"])
    assert status == 200 and headers["content-type"].startswith("text/html")
    spec = get(api.url, "/openapi.json", api.keys["acme"])
    for path in spec["paths"]:
        assert f"<code>{path}</code>" in page
    for name in spec["components"]["schemas"]:
        assert f'id="schema-{re.sub(r"[^A-Za-z0-9_-]", "-", name)}"' in page
    assert "<script" not in page.lower() and "http://" not in page and "https://" not in page
    csp = headers["content-security-policy"]
    assert "default-src 'none'" in csp and "script-src" not in csp
    assert "cursor" in page and "route=billing" in page
    links = set(re.findall(r'href="#([^"]+)"', page))
    assert links and links <= set(re.findall(r'id="([^"]+)"', page))
