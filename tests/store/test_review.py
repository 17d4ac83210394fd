"""The review queue on a real store (SQLite and PostgreSQL): the worker's job queues what the
policy picks, once per evaluation; leases give an item to one reviewer at a time and never
back to someone who labelled it; a tenant sees only its own items."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

from sqlalchemy.orm import Session, sessionmaker

from faithmon.jobs.review import fill_queue
from faithmon.model.review import ClaimLabel, item_json
from faithmon.review.queue import QueuePolicy
from faithmon.store import records as store_records
from faithmon.store import review as store_review
from tests.store.factory import EVERYTHING, JUDGE, records, scored


def test_the_queue_is_filled_once_most_urgent_first(sessions: sessionmaker[Session]) -> None:
    """Every evaluation once (a second run adds nothing); unsupported answers first."""
    scored(sessions, records([None, None]) + records([None], bad=True))
    assert fill_queue(sessions, JUDGE.name, EVERYTHING) == 3
    assert fill_queue(sessions, JUDGE.name, EVERYTHING) == 0
    with sessions() as session:
        items = store_review.queue(session)
    assert [i.reason for i in items] == ["low_score", "high_score", "high_score"]
    assert all(i.inclusion_probability == 1.0 and i.claims for i in items)
    assert [c.index for c in items[0].claims] == list(range(len(items[0].claims)))
    assert {c.verdict for c in items[0].claims} >= {"supported", "unsupported"}


def test_leases_give_an_item_to_one_reviewer_at_a_time(sessions: sessionmaker[Session]) -> None:
    """ann and bo lease different items; once ann labels hers it is done and nobody gets it;
    an expired lease frees an item; a double-review item goes to two different people."""
    scored(sessions, records([None, None]))
    fill_queue(sessions, JUDGE.name, EVERYTHING)
    now = datetime.now(UTC)
    with sessions.begin() as session:
        ann = store_review.lease_next(session, "ann", now)
    with sessions.begin() as session:
        bo = store_review.lease_next(session, "bo", now)
    with sessions.begin() as session:
        cy = store_review.lease_next(session, "cy", now)
    assert ann is not None and bo is not None and ann.id != bo.id and cy is None
    with sessions.begin() as session:
        store_review.label(session, ann, "ann", [ClaimLabel(0, "supported")], "", now)
    later = now + timedelta(hours=1)
    with sessions.begin() as session:
        freed = store_review.lease_next(session, "cy", later)
    assert freed is not None and freed.id == bo.id  # bo's lease ran out; ann's item is done

    scored(sessions, records([None], bad=True))
    fill_queue(sessions, JUDGE.name, QueuePolicy(sample_rate=1.0, double_share=1.0))
    with sessions.begin() as session:
        first = store_review.lease_next(session, "ann", later)
        assert first is not None and first.reviews_wanted == 2
        store_review.label(session, first, "ann", [ClaimLabel(0, "supported")], "", later)
    with sessions.begin() as session:
        again = store_review.lease_next(session, "ann", later)
        second = store_review.lease_next(session, "dee", later)
    assert again is None or again.id != first.id
    assert second is not None and second.id == first.id
    with sessions.begin() as session:
        done = store_review.label(session, second, "dee", [ClaimLabel(0, "unsupported")], "", later)
    assert done.status == "done"
    with sessions() as session:
        assert store_review.labelled_by(session, first.id) == ["ann", "dee"]
        (reviewed,) = [r for r in store_review.reviewed(session) if r.trace_id == first.trace_id]
    assert list(reviewed.labels) == ["ann", "dee"] and reviewed.labels["dee"] == {0: "unsupported"}


def test_a_tenant_sees_only_its_own_items(sessions: sessionmaker[Session]) -> None:
    """acme's reviewer neither lists nor leases globex's items, nor reads their labels."""
    scored(sessions, records(["acme", "globex", "globex"]))
    fill_queue(sessions, JUDGE.name, EVERYTHING)
    now = datetime.now(UTC)
    with sessions.begin() as session:
        assert {i.tenant for i in store_review.queue(session, "acme")} == {"acme"}
        mine = store_review.lease_next(session, "ann", now, tenant="acme")
        assert mine is not None and mine.tenant == "acme"
        store_review.label(session, mine, "ann", [ClaimLabel(0, "supported")], "", now)
        assert store_review.lease_next(session, "ann2", now, tenant="acme") is None
        theirs = store_review.lease_next(session, "gil", now, tenant="globex")
        assert theirs is not None and theirs.tenant == "globex"
        assert store_review.find(session, mine.trace_id, tenant="globex") is None
        assert [r.trace_id for r in store_review.reviewed(session, "globex")] == []
        assert [r.trace_id for r in store_review.reviewed(session, "acme")] == [mine.trace_id]


def test_the_threshold_in_use_sends_its_guard_band_to_people(
    sessions: sessionmaker[Session],
) -> None:
    """With nothing sampled, an answer scored 0.5 is queued only because the judge's
    calibrated threshold has a guard band around it."""
    from faithmon.model.review import Threshold
    from faithmon.store import review_thresholds

    nothing = QueuePolicy(sample_rate=0.0, low_share=0.0, double_share=0.0)
    scored(sessions, records([None], bad=True))
    assert fill_queue(sessions, JUDGE.name, nothing) == 0
    band = Threshold(0.5, 0.45, 0.55, 0.1, 0.05, 40, "test")
    with sessions.begin() as session:
        review_thresholds.save_threshold(session, JUDGE.name, "", band, "v1", datetime.now(UTC))
    more = records([None, None], bad=True)
    scored(sessions, [replace(r, trace_id=f"{n + 800:032x}") for n, r in enumerate(more)])
    assert fill_queue(sessions, JUDGE.name, nothing) == 2
    with sessions() as session:
        assert {i.reason for i in store_review.queue(session)} == {"guard_band"}


def test_an_item_carries_the_llm_judges_reason(sessions: sessionmaker[Session]) -> None:
    """The reason an LLM judge gave for an unsupported claim reaches the reviewer."""
    from faithmon.model import Claim, Judgement
    from faithmon.model.review import item_json
    from faithmon.store import evaluations as store_evaluations
    from faithmon.store.tables import RecordRow

    (record,) = records([None], bad=True)
    with sessions.begin() as session:
        store_records.save_records(session, [record])
        row_id = session.query(RecordRow.id).scalar()
        judged = Judgement(
            "openai:judge",
            "ok",
            (
                Claim("Order A17 shipped on 3 March.", "supported", 0, "shipped on 3 March"),
                Claim("It arrives tomorrow by drone.", "unsupported", rationale="No chunk."),
            ),
        )
        store_evaluations.settle(session, row_id, judged)
    fill_queue(sessions, "openai:judge", EVERYTHING)
    with sessions() as session:
        (item,) = store_review.queue(session)
    claims = item_json(item)["claims"]
    assert [c["rationale"] for c in claims] == [None, "No chunk."]


def test_merged_and_split_labels_are_kept_and_read_per_claim(
    sessions: sessionmaker[Session],
) -> None:
    """A merge gives each merged claim the one verdict, with the merged text kept; a split
    claim reads as its first failing part."""
    from faithmon.store.tables import ReviewLabelRow

    scored(sessions, records([None], bad=True))
    fill_queue(sessions, JUDGE.name, EVERYTHING)
    now = datetime.now(UTC)
    with sessions.begin() as session:
        (item,) = store_review.queue(session)
        assert len(item.claims) == 2
        merged = [ClaimLabel(i, "contradicted", True, 0, "both", (0, 1)) for i in (0, 1)]
        store_review.label(session, item, "ann", merged, "", now)
        rows = session.query(ReviewLabelRow).order_by(ReviewLabelRow.id).all()
        assert [(r.claim_index, r.merged, r.claim_text) for r in rows] == [
            (0, [0, 1], "both"),
            (1, [0, 1], "both"),
        ]
    with sessions() as session:
        (reviewed,) = store_review.reviewed(session)
    assert reviewed.labels == {"ann": {0: "contradicted", 1: "contradicted"}}


def test_reviewers_see_what_the_contracts_said_of_each_claim(
    sessions: sessionmaker[Session],
) -> None:
    """The rule that made a claim critical and what its markers cite reach the item."""
    record = replace(
        records([None])[0],
        answer="Order A17 shipped on 3 March by courier [1]. It arrives by drone [4].",
    )
    scored(sessions, [record])
    fill_queue(sessions, JUDGE.name, EVERYTHING)
    with sessions() as session:
        [item] = store_review.queue(session)
    first, second = item.claims
    assert (first.critical_rule, first.citations, first.citation) == ("date", (0,), "correct")
    assert (second.citations, second.citation) == ((), "unresolved")
    shown = item_json(item)["claims"]
    assert shown[0]["citation"] == "correct" and shown[0]["critical_rule"] == "date"
