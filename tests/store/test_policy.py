"""Policy findings counted per segment over a window, on SQLite and PostgreSQL."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import update
from sqlalchemy.orm import Session, sessionmaker

from faithmon.model import Judgement, PolicyFinding, RuleCount
from faithmon.store import evaluations, records
from faithmon.store import policy as store_policy
from faithmon.store.tables import EvaluationRow
from tests.store.factory import make_record

FINDINGS = {
    2: (PolicyFinding("pii", "<EMAIL_1a2b3c4d>"), PolicyFinding("pii", "<PHONE_9f8e7d6c>")),
    5: (PolicyFinding("secrets", "sk-...."),),
    7: (PolicyFinding("pii", "<EMAIL_1a2b3c4d>"),),
}


@pytest.fixture
def scored(sessions: sessionmaker[Session]) -> datetime:
    """Ten evaluations by judge ``j`` (one a judge error) over routes a and b in turn, of
    tenant acme; records 2 (route a), 5 (the judge error) and 7 (both route b) carry
    findings; the first was made two hours ago. Returns now."""
    with sessions.begin() as session:
        records.save_records(
            session,
            [make_record(n, route="ab"[n % 2], tenant="acme") for n in range(10)],
        )
    with sessions.begin() as session:
        claimed = records.claim_pending(session, "w", 20, 60)
        for record_id, _ in claimed:
            n = record_id - claimed[0][0]
            status = "judge_error" if n == 5 else "no_claims"
            judgement = Judgement("j", status, policy=FINDINGS.get(n, ()))  # type: ignore[arg-type]
            evaluations.save_evaluation(session, record_id, judgement)
        old = datetime.now(UTC) - timedelta(hours=2)
        first = claimed[0][0]
        session.execute(
            update(EvaluationRow).where(EvaluationRow.record_id == first).values(created_at=old)
        )
    return datetime.now(UTC)


def test_findings_are_counted_per_segment_in_the_window(
    sessions: sessionmaker[Session], scored: datetime, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each segment with a finding in the window, whatever the evaluation's status, with
    its evaluations, the flagged ones and the rules' counts; none of the findings' text.
    Read in batches of three, the walk stops at the first evaluation outside the window."""
    monkeypatch.setattr(store_policy, "BATCH", 3)
    with sessions() as session:
        found = store_policy.policy_findings(
            session, "j", scored - timedelta(hours=1), ("route",), "tenant", examples=2
        )

    by_key = {",".join(f"{k}={v}" for k, v in sorted(f.segment.items())): f for f in found}
    assert set(by_key) == {"tenant=acme", "route=a,tenant=acme", "route=b,tenant=acme"}
    overall, b = by_key["tenant=acme"], by_key["route=b,tenant=acme"]
    assert (overall.evaluations, len(overall.flagged)) == (9, 3)
    assert (b.evaluations, len(b.flagged)) == (5, 2)
    assert b.flagged < overall.flagged and overall.root == b.root == "tenant=acme"
    assert overall.rules == (RuleCount("pii", 2, 3), RuleCount("secrets", 1, 1))
    assert overall.share == pytest.approx(3 / 9)
    assert overall.examples == ((f"{7:032x}", ("pii",)), (f"{5:032x}", ("secrets",)))
    assert "EMAIL" not in repr(found)


def test_the_window_and_the_judge_bound_what_is_counted(
    sessions: sessionmaker[Session], scored: datetime
) -> None:
    """Another judge's evaluations, and a window that begins after the last one, count
    nothing."""
    with sessions() as session:
        other = store_policy.policy_findings(session, "other", scored - timedelta(hours=3), ())
        assert other == []
        assert store_policy.policy_findings(session, "j", scored + timedelta(seconds=1), ()) == []
        every = store_policy.policy_findings(session, "j", scored - timedelta(hours=3), ())
    assert [(dict(f.segment), f.evaluations) for f in every] == [({}, 10)]
