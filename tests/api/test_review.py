"""The review loop's read API over a real server on SQLite and PostgreSQL: the queue lists
open items as the CLI prints them; a tenant's key sees and labels only its tenant's items;
`next` never gives one item to two reviewers; labels are checked, each refusal one line,
and stored; changes need `review`; agreement reads the labels."""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import nullcontext

import pytest
from sqlalchemy import select

from faithmon.api.v1 import review as review_api
from faithmon.cli.review import item_json
from faithmon.store import review as store_review
from faithmon.store.tables import ReviewLabelRow
from tests.api.reviewing import (
    CONTEXT,
    HOSTILE,
    JUDGE,
    REVIEWERS,
    TWICE,
    Served,
    call,
    label,
    of,
    queue_records,
    record,
    serve,
)

# The dialect is not the point here: PostgreSQL runs in the second_backend tier.
pytestmark = pytest.mark.one_backend


@pytest.fixture
def served(database_url: str) -> Iterator[Served]:
    with serve(database_url) as served:
        yield served


def test_the_queue_lists_open_items_as_the_cli_prints_them(served: Served) -> None:
    status, queue = call(served, "GET", "/api/v1/review/queue", "reader")
    assert status == 200
    assert [i["trace_id"] for i in queue["items"]] == served.traces
    with served.sessions() as session:
        stored = store_review.queue(session)
    for shown, item in zip(queue["items"], stored, strict=True):
        printed = item_json(item)
        assert shown.keys() == printed.keys()
        for key in printed.keys() - {"created_at"}:
            assert shown[key] == printed[key], key
    hostile, plain = queue["items"][:2]
    assert (hostile["reason"], hostile["priority"], hostile["status"]) == ("critical", 0, "open")
    assert plain["reason"] == "low_score" and plain["inclusion_probability"] == 1.0
    assert [c["verdict"] for c in plain["claims"]] == ["supported", "unsupported"]
    assert plain["claims"][0]["quote"] and plain["claims"][0]["chunk"] == 0
    status, two = call(served, "GET", "/api/v1/review/queue?limit=2", "reader")
    assert [i["trace_id"] for i in two["items"]] == served.traces[:2]
    assert call(served, "GET", "/api/v1/review/queue?limit=0", "reader")[0] == 422


def test_a_tenant_key_sees_and_labels_only_its_tenant(served: Served) -> None:
    acme = of(served, "acme")
    _, queue = call(served, "GET", "/api/v1/review/queue", "acme")
    assert [i["trace_id"] for i in queue["items"]] == acme and len(acme) == 3
    assert {i["tenant"] for i in queue["items"]} == {"acme"}
    status, leased = call(served, "POST", "/api/v1/review/next", "acme")
    assert status == 200 and leased["trace_id"] == acme[0] and leased["tenant"] == "acme"
    # Another tenant's trace is as unknown as one never queued.
    for trace_id in (of(served, "globex")[0], served.traces[0], "0" * 32, "x" * 40):
        status, said = label(served, "acme", trace_id, (0, "supported"))
        assert (status, said) == (404, {"detail": "no such review item"})
        assert call(served, "POST", f"/api/v1/review/items/{trace_id}/skip", "acme")[0] == 404
    status, done = label(served, "acme", acme[0], (0, "supported"), (1, "contradicted"))
    assert status == 200 and done["status"] == "done" and done["reviewer"] == served.who("acme")
    with served.sessions() as session:
        assert [r.trace_id for r in store_review.reviewed(session, "acme")] == [acme[0]]
        assert store_review.reviewed(session, "globex") == []


def test_next_never_gives_one_item_to_two_reviewers(served: Served) -> None:
    status, first = call(served, "POST", "/api/v1/review/next", "ann")
    assert status == 200 and first["trace_id"] == served.traces[0]
    assert first["lease_owner"] == served.who("ann") and first["lease_expires"]
    # What the reviewer reads, as stored (JSON carries text; only pages escape it).
    assert first["question"] == f"Where is order A17? {HOSTILE}"
    assert first["answer"] == f"{CONTEXT} It costs 40 euros. {HOSTILE}"
    assert first["chunks"] == [
        {"index": 0, "position": 0, "id": f"doc {HOSTILE}", "text": f"{CONTEXT} {HOSTILE}"},
        {"index": 1, "position": 1, "id": None, "text": "Couriers do not fly."},
    ]
    assert [(c["verdict"], c["chunk"]) for c in first["claims"]] == [
        ("supported", 0),
        ("unsupported", None),
        ("supported", 0),
    ]
    assert first["claims"][2]["quote"] == HOSTILE and first["labels"]["route"] == "orders"
    # Asking again gives ann the item she holds, not a second one.
    assert call(served, "POST", "/api/v1/review/next", "ann")[1]["trace_id"] == first["trace_id"]

    # Six reviewers at once for the five items left: each item to one of them; one waits.
    others = REVIEWERS[1:]
    with ThreadPoolExecutor(len(others)) as pool:
        got = list(pool.map(lambda r: call(served, "POST", "/api/v1/review/next", r), others))
    leased = [body["trace_id"] for status, body in got if status == 200]
    assert sorted(leased) == sorted(served.traces[1:])
    assert [status for status, _ in got].count(204) == 1
    # Someone else cannot label or skip what ann holds.
    status, said = label(served, "bo", first["trace_id"], (0, "supported"))
    assert status == 409 and f"being reviewed by {served.who('ann')}" in said["detail"]
    skipped = call(served, "POST", f"/api/v1/review/items/{first['trace_id']}/skip", "bo")
    assert skipped[0] == 409


def test_one_item_is_labelled_once_by_reviewers_racing(
    served: Served, database_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two reviewers label each single-review item at once: one wins, the other hears it is
    done. On PostgreSQL without the server's own lock, as between two servers."""
    if database_url.startswith("postgresql"):
        monkeypatch.setattr(review_api, "_WRITES", nullcontext())
    traces = served.traces[1:]

    def race(trace_id: str) -> list[int]:
        with ThreadPoolExecutor(2) as pool:
            calls = [
                pool.submit(label, served, r, trace_id, (0, "supported"), (1, "supported"))
                for r in ("ann", "bo")
            ]
            return sorted(c.result()[0] for c in calls)

    with ThreadPoolExecutor(len(traces)) as pool:
        assert list(pool.map(race, traces)) == [[200, 409]] * len(traces)
    with served.sessions() as session:
        reviewed = store_review.reviewed(session)
    assert sorted(r.trace_id for r in reviewed) == sorted(traces)
    assert all(len(r.labels) == 1 for r in reviewed)


def test_labels_are_checked_then_stored(served: Served) -> None:
    trace_id = served.traces[1]
    twice = [{"index": 1, "verdict": "supported"}, {"index": 1, "verdict": "unsupported"}]
    problems = [
        ({"claims": [{"index": 0, "verdict": "maybe"}]}, "supported"),
        (
            {"claims": [{"index": 2, "verdict": "supported"}]},
            "claim 2 does not exist (claims: 0 to 1)",
        ),
        ({"claims": twice}, "claim 1 is labelled twice"),
        ({"claims": []}, "at least 1"),
        ({"claims": [{"index": -1, "verdict": "supported"}]}, "greater than or equal to 0"),
        ({"note": "no claims"}, "Field required"),
        # Labelling closes the item: a claim left out could never be labelled after.
        ({"claims": [{"index": 0, "verdict": "supported"}]}, "claim 1 has no label"),
    ]
    path = f"/api/v1/review/items/{trace_id}/labels"
    for body, says in problems:
        status, said = call(served, "POST", path, "ann", body)
        assert status == 422, (body, said)
        (problem,) = said["detail"]
        assert says in problem["msg"] and "\n" not in problem["msg"], (body, problem)
    # A read-only key changes nothing.
    assert label(served, "reader", trace_id, (0, "supported"))[0] == 403
    assert call(served, "POST", "/api/v1/review/next", "reader")[0] == 403
    assert call(served, "POST", f"/api/v1/review/items/{trace_id}/skip", "reader")[0] == 403

    status, done = label(served, "ann", trace_id, (0, "supported"), (1, "not_verifiable"))
    assert status == 200, done
    assert (done["status"], done["reviews_done"], done["labelled"]) == ("done", 1, 2)
    status, again = label(served, "ann", trace_id, (0, "supported"))
    assert (status, again) == (409, {"detail": f"the review item of trace {trace_id} is done"})
    with served.sessions() as session:
        (reviewed,) = store_review.reviewed(session)
        notes = session.scalars(select(ReviewLabelRow.note)).all()
    assert reviewed.trace_id == trace_id and reviewed.judge == JUDGE.name
    assert reviewed.labels == {served.who("ann"): {0: "supported", 1: "not_verifiable"}}
    assert notes == ["checked", "checked"]
    _, queue = call(served, "GET", "/api/v1/review/queue", "admin")
    assert trace_id not in [i["trace_id"] for i in queue["items"]]

    # An item wanting two reviewers: ann labels once, not twice; bo then closes it.
    queue_records(served.sessions, [record(50, None)], TWICE)
    double = record(50, None).trace_id
    both = ((0, "supported"), (1, "unsupported"))
    assert label(served, "ann", double, *both)[1]["status"] == "open"
    status, said = label(served, "ann", double, *both)
    assert (status, said["detail"]) == (
        409,
        f"{served.who('ann')} has already labelled trace {double}",
    )
    assert label(served, "bo", double, *both)[1]["status"] == "done"

    # Skipping takes an item out of the queue, once.
    skip = f"/api/v1/review/items/{served.traces[2]}/skip"
    status, skipped = call(served, "POST", skip, "ann")
    assert status == 200 and skipped["status"] == "skipped"
    assert call(served, "POST", skip, "ann")[0] == 409
    with served.sessions() as session:
        found = store_review.find(session, served.traces[2])
    assert found is not None and found.status == store_review.SKIPPED


def test_agreement_reads_the_labels(served: Served) -> None:
    status, empty = call(served, "GET", "/api/v1/review/agreement", "reader")
    assert status == 200 and empty["judges"] == [] and empty["reviewers"]["n"] == 0
    # The judge failed each answer (its second claim): ann agrees twice and passes one.
    picked = [*of(served, "acme")[:2], of(served, "globex")[0]]
    for trace_id, second in zip(picked, ("unsupported", "contradicted", "supported"), strict=True):
        assert label(served, "ann", trace_id, (0, "supported"), (1, second))[0] == 200
    status, figures = call(served, "GET", "/api/v1/review/agreement", "reader")
    assert status == 200
    (judge,) = figures["judges"]
    assert judge["judge"] == JUDGE.name
    assert judge["claim_level"]["n"] == 6 and judge["answer_level"]["n"] == 3
    assert judge["answer_level"]["false_rejection"]["rate"] == 1.0
    segments = {s["segment"]: s["answer_level"]["n"] for s in judge["segments"]}
    assert segments == {"model=m1": 3, "route=orders": 3, "tenant=acme": 2, "tenant=globex": 1}
    # A tenant's key: the agreement over its tenant's labels only.
    _, acme = call(served, "GET", "/api/v1/review/agreement", "acme")
    assert acme["judges"][0]["answer_level"]["n"] == 2
    _, globex = call(served, "GET", "/api/v1/review/agreement", "globex")
    (only,) = globex["judges"]
    assert only["answer_level"]["n"] == 1 and only["answer_level"]["false_rejection"]["rate"] == 1.0


def test_a_reviewer_splits_and_merges_through_the_api(served: Served) -> None:
    """Parts of a split claim and a merge go through the same check as the CLI's; the
    labels read back per claim."""
    first, second = served.traces[3], served.traces[4]
    path = f"/api/v1/review/items/{first}/labels"
    missing_text = [
        {"index": 0, "verdict": "supported", "part": 0, "text": "Order A17 shipped."},
        {"index": 0, "verdict": "unsupported", "part": 1},
        {"index": 1, "verdict": "unsupported"},
    ]
    status, said = call(served, "POST", path, "admin", {"claims": missing_text})
    assert status == 422 and "each part of claim 0 needs its text" in said["detail"][0]["msg"]
    missing_text[1]["text"] = "By courier."
    assert call(served, "POST", path, "admin", {"claims": missing_text})[0] == 200
    merge = [{"index": i, "verdict": "contradicted", "merged": [0, 1], "text": "x"} for i in (0, 1)]
    status, _ = call(
        served, "POST", f"/api/v1/review/items/{second}/labels", "admin", {"claims": merge}
    )
    assert status == 200
    with served.sessions() as session:
        got = {r.trace_id: r.labels[served.who("admin")] for r in store_review.reviewed(session)}
    assert got[first] == {0: "unsupported", 1: "unsupported"}
    assert got[second] == {0: "contradicted", 1: "contradicted"}
