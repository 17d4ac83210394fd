"""Tenant isolation on every read endpoint, with two tenants' keys and an operator's: a
tenant sees its own traces, segments, alerts and documents, another tenant's trace or
alert is unknown (404); sentinels and judges are the same for every reader."""

from __future__ import annotations

import re

import pytest

from faithmon.api.app import create_app
from faithmon.ingest.pipeline import Pipeline
from faithmon.ingest.sampler import KeepAll
from faithmon.ingest.scrub import identity
from faithmon.store import Sessions
from faithmon.store import records as store_records
from tests.api.client import call, every_page, get, send
from tests.api.seed import RECORDS, Seeded, make_record
from tests.servers import serve_in_thread

TENANT_PAIRS = [("acme", "globex"), ("globex", "acme")]


@pytest.mark.parametrize(("tenant", "other"), TENANT_PAIRS)
def test_a_tenant_sees_its_traces_only(api: Seeded, tenant: str, other: str) -> None:
    """Lists hold the tenant's traces (whatever the filters ask); another's trace is 404."""
    key = api.keys[tenant]
    items = every_page(api.url, "/api/v1/traces", key, 500)
    assert sorted(i["trace_id"] for i in items) == sorted(api.traces[tenant])
    assert {i["labels"]["tenant"] for i in items} == {tenant}
    asked_for_other = every_page(api.url, "/api/v1/traces", key, 500, label=[f"tenant:{other}"])
    assert asked_for_other == []
    own, theirs, untenanted = api.traces[tenant][0], api.traces[other][0], api.traces[None][0]
    assert get(api.url, f"/api/v1/traces/{own}", key)["labels"]["tenant"] == tenant
    for hidden in (theirs, untenanted):
        status, body, _ = call(api.url, f"/api/v1/traces/{hidden}", key)
        assert status == 404 and body == {"detail": "no such trace"}


@pytest.mark.parametrize("role", ["admin", "reader"])
def test_an_operator_sees_every_tenant(api: Seeded, role: str) -> None:
    """A key bound to no tenant (admin, or read alone) sees every trace and alert."""
    traces = every_page(api.url, "/api/v1/traces", api.keys[role], 500)
    assert len(traces) == RECORDS
    alerts = every_page(api.url, "/api/v1/alerts", api.keys[role], 500)
    assert sorted(a["id"] for a in alerts) == sorted(api.alerts.values())


@pytest.mark.parametrize(("tenant", "other"), TENANT_PAIRS)
def test_a_tenant_sees_its_segments_only(api: Seeded, tenant: str, other: str) -> None:
    """Drift segments shown to a tenant name it; another's (or no tenant's) series is 404."""
    key = api.keys[tenant]
    segments = get(api.url, "/api/v1/segments", key)
    assert segments["items"], "the tenant has segments of its own"
    assert all(item["labels"].get("tenant") == tenant for item in segments["items"])
    assert all(item["labels"].get("tenant") == tenant for item in segments["silent"])
    every = get(api.url, "/api/v1/segments", api.keys["admin"])["items"]
    assert [i for i in every if i["labels"].get("tenant") == tenant] == segments["items"]
    own = get(api.url, f"/api/v1/segments/tenant={tenant}/series", key)
    assert sum(b["records"] for b in own["buckets"]) > 0
    for hidden in (f"tenant={other}", f"route=billing,tenant={other}", "overall", "route=billing"):
        status, _, _ = call(api.url, f"/api/v1/segments/{hidden}/series", key)
        assert status == 404, hidden


@pytest.mark.parametrize(("tenant", "other"), TENANT_PAIRS)
def test_a_tenant_sees_its_alerts_and_the_judges(api: Seeded, tenant: str, other: str) -> None:
    """A tenant's alerts are those of its segments and those about the judge."""
    key = api.keys[tenant]
    alerts = every_page(api.url, "/api/v1/alerts", key, 2)
    mine = {i for name, i in api.alerts.items() if name.startswith(tenant)} | {api.alerts["judge"]}
    assert {a["id"] for a in alerts} == mine
    for name, alert_id in api.alerts.items():
        status, _, _ = call(api.url, f"/api/v1/alerts/{alert_id}", key)
        assert status == (200 if alert_id in mine else 404), name
    firing = every_page(api.url, "/api/v1/alerts", key, 50, state="firing")
    assert {a["id"] for a in firing} == {a["id"] for a in alerts if a["state"] == "firing"}


def test_a_tenant_acks_its_own_alerts_only(api: Seeded) -> None:
    """The ack names the key that made it (by the name it was created with); another
    tenant's alert cannot be acked (404)."""
    key = api.keys["acme_review"]
    status, body, _ = call(api.url, f"/api/v1/alerts/{api.alerts['globex']}/ack", key, "POST")
    assert status == 404 and body == {"detail": "no such alert"}
    assert (
        get(api.url, f"/api/v1/alerts/{api.alerts['globex']}", api.keys["admin"])["acked_by"]
        is None
    )
    status, body, _ = call(api.url, f"/api/v1/alerts/{api.alerts['acme']}/ack", key, "POST")
    assert status == 200, body
    assert body["acked_by"] == "acme_review"
    assert body["acked_at"] is not None and body["state"] == "pending"
    shown = get(api.url, f"/api/v1/alerts/{api.alerts['acme']}", api.keys["acme"])
    assert shown["acked_by"] == body["acked_by"]
    status, _, _ = call(
        api.url, f"/api/v1/alerts/{api.alerts['acme']}/ack", api.keys["acme"], "POST"
    )
    assert status == 403  # read alone cannot ack


def _page(api: Seeded, path: str, role: str, form: bool = False) -> tuple[int, str]:
    headers = {"Authorization": f"Bearer {api.keys[role]}", "Accept": "text/html"}
    status, body, _ = send(api.url + path, b"" if form else None, headers, follow_redirects=False)
    return status, body.decode()


def test_the_alerts_page_offers_an_ack_to_whoever_may_and_names_the_key(api: Seeded) -> None:
    """An Acknowledge button shows for an open alert the key may act on (review scope, its
    tenant's); pressing it records the key's name, shown on the page and by the API."""
    acts = re.compile(r'action="/alerts/(\d+)/ack"')
    assert acts.findall(_page(api, "/alerts", "reader")[1]) == []  # read alone
    offered = {int(i) for i in acts.findall(_page(api, "/alerts", "acme_review")[1])}
    assert api.alerts["acme_billing"] in offered
    assert {api.alerts["judge"], api.alerts["acme_old"]}.isdisjoint(offered)
    alert_id = api.alerts["overall"]
    assert _page(api, f"/alerts/{alert_id}/ack", "admin", form=True)[0] == 303
    assert get(api.url, f"/api/v1/alerts/{alert_id}", api.keys["reader"])["acked_by"] == "admin"
    _, page = _page(api, "/alerts", "reader")
    assert re.search(r"acknowledged by admin at \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC", page)
    assert str(alert_id) not in acts.findall(_page(api, "/alerts", "admin")[1])


def test_an_empty_review_queue_cannot_be_started(api: Seeded) -> None:
    """Nothing is queued for the tenant's reviewer: the button is there, and disabled."""
    _, desk = _page(api, "/review", "acme_review")
    assert "The review queue is empty" in desk and "<button disabled>" in desk
    assert 'action="/review/next"' not in desk


@pytest.mark.parametrize(("tenant", "other"), TENANT_PAIRS)
def test_a_tenant_sees_the_documents_of_its_traces(api: Seeded, tenant: str, other: str) -> None:
    """Documents count only the tenant's traces: no other tenant's document shows."""
    documents = every_page(api.url, "/api/v1/documents", api.keys[tenant], 500)
    assert documents and all(d["id"].startswith(f"{tenant}-") for d in documents)
    mine = sum(1 for n in range(RECORDS) if make_record(n).labels.get("tenant") == tenant)
    assert sum(d["passed"] for d in documents if d["id"] == f"{tenant}-faq") == mine
    claimed = {c["trace_id"] for d in documents for c in d["contradicted_claims"]}
    assert claimed <= set(api.traces[tenant])


@pytest.mark.parametrize("tenant", ["acme", "globex"])
def test_sentinels_and_judges_are_the_same_for_every_reader(api: Seeded, tenant: str) -> None:
    """They describe the judge, not a tenant's traffic."""
    for path in ("/api/v1/sentinels", "/api/v1/judges"):
        assert get(api.url, path, api.keys[tenant]) == get(api.url, path, api.keys["admin"])


def test_every_read_route_needs_a_read_key(api: Seeded) -> None:
    """No key is 401, an ingest-only key 403, on every route of the read API and its docs."""
    for path in (
        "/api/v1/traces",
        f"/api/v1/traces/{api.traces['acme'][0]}",
        "/api/v1/segments",
        "/api/v1/segments/overall/series",
        "/api/v1/alerts",
        f"/api/v1/alerts/{api.alerts['acme']}",
        "/api/v1/documents",
        "/api/v1/sentinels",
        "/api/v1/judges",
        "/docs",
        "/openapi.json",
    ):
        assert call(api.url, path)[0] == 401, path
        assert call(api.url, path, api.keys["ingest"])[0] == 403, path


def test_without_auth_nothing_is_restricted(sessions: Sessions) -> None:
    """An app served without keys (ingest's tests, the benches) restricts no tenant."""
    with sessions.begin() as session:
        store_records.save_records(session, [make_record(n) for n in range(6)])
    pipeline = Pipeline(lambda batch: None, sampler=KeepAll(), scrubber=identity)
    with serve_in_thread(create_app(pipeline, sessions=sessions)) as url:
        items = get(url, "/api/v1/traces")["items"]
        assert len(items) == 6
        assert {i["labels"].get("tenant") for i in items} == {"acme", "globex", None}
        assert get(url, "/api/v1/judges")["budget"]["known"] is False
        segments = get(url, "/api/v1/segments")
        assert segments == {
            "judge": None,
            "baseline_ready": False,
            "items": [],
            "silent": [],
            "building": [],
            "computed_at": None,
            "source": "none",
            "stale": False,
        }
