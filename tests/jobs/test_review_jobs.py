"""judge_disagreement on a real store: once enough answers are labelled and the judge's
agreement with the reviewers is under the bound, the alert fires through the sinks with the
worst disagreements; labels that agree resolve it."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

import pytest
from sqlalchemy.orm import Session, sessionmaker

from faithmon.alerts import ListSink
from faithmon.jobs.review import check_disagreement, fill_queue
from faithmon.model.review import ClaimLabel
from faithmon.store import review as store_review
from tests.store.factory import EVERYTHING, JUDGE, records, scored

# The dialect is not the point here: PostgreSQL runs in the second_backend tier.
pytestmark = pytest.mark.one_backend


def label_all(sessions: sessionmaker[Session], reviewer: str, agree: bool) -> None:
    """``reviewer`` labels every claim of every open item: as the judge did (``agree``), or
    unsupported."""
    now = datetime.now(UTC)
    with sessions.begin() as session:
        for item in store_review.queue(session, limit=100):
            labels = [
                ClaimLabel(
                    c.index, "supported" if agree and c.verdict == "supported" else "unsupported"
                )
                for c in item.claims
            ]
            store_review.label(session, item, reviewer, labels, "", now)


def test_disagreement_fires_then_resolves(sessions: sessionmaker[Session]) -> None:
    scored(sessions, records([None] * 3) + records([None], bad=True))
    fill_queue(sessions, JUDGE.name, EVERYTHING)
    # The reviewer fails all four: the three the judge passed are false acceptances (3 of 4).
    label_all(sessions, "ann", agree=False)
    sink = ListSink()
    (fired,) = check_disagreement(sessions, JUDGE.name, 0.4, 4, [sink])
    assert (fired.rule, fired.state, fired.segment) == (
        "judge_disagreement",
        "firing",
        {"judge": JUDGE.name},
    )
    assert fired.details["answers"] == 4 and fired.details["false_acceptance"] == 0.75
    kinds = {e["kind"] for e in fired.details["examples"]}
    assert kinds == {"false_acceptance"} and len(fired.details["examples"]) == 3
    assert sink.alerts == [fired]

    # Five answers both pass and five both fail: κ over the 14 is 0.59.
    more = records([None] * 5) + records([None] * 5, bad=True)
    scored(sessions, [replace(r, trace_id=f"{n + 900:032x}") for n, r in enumerate(more)])
    fill_queue(sessions, JUDGE.name, EVERYTHING)
    label_all(sessions, "ann", agree=True)
    (resolved,) = check_disagreement(sessions, JUDGE.name, 0.4, 4, [sink])
    assert resolved.state == "resolved" and resolved.id == fired.id
