"""``policy_violation`` through the worker's policy check and the store, on SQLite and
PostgreSQL: answers scored by the offline judge with the contracts, whose policy rules
find an e-mail address no chunk held."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy.orm import Session, sessionmaker

from faithmon import drift
from faithmon.alerts import ListSink
from faithmon.jobs import score_pending
from faithmon.jobs.violations import WINDOW, check_policy
from faithmon.judge import OfflineJudge
from faithmon.judge.contracts import checked
from faithmon.model import Chunk, RagRecord, visible_to
from faithmon.store import alerts as store_alerts
from faithmon.store import policy as store_policy
from faithmon.store import records as store_records
from tests.timing import days_ago

# The dialect is not the point here: PostgreSQL runs in the second_backend tier.
pytestmark = pytest.mark.one_backend

JUDGE = checked(OfflineJudge())
CONTEXT = "Order A17 shipped on 3 March by courier."
CLEAN = CONTEXT
ADDRESS = "jane.doe@example.com"
LEAKY = f"{CONTEXT} Write to {ADDRESS} for details."
CONFIG = drift.DriftConfig(dimensions=("route", "model", "tenant"))


def record(n: int, answer: str, **labels: str) -> RagRecord:
    return RagRecord(
        trace_id=f"{n + 1:032x}",
        question="Where is order A17?",
        answer=answer,
        chunks=(Chunk(0, CONTEXT, id="doc-orders"),),
        labels=labels,
        started_at=days_ago(1) + timedelta(minutes=n),
    )


def save_and_score(sessions: sessionmaker[Session], records: list[RagRecord]) -> None:
    with sessions.begin() as session:
        store_records.save_records(session, records)
    score_pending(sessions, JUDGE)


def traffic(leaky: set[int], count: int = 40) -> list[RagRecord]:
    """Tenant acme on routes a and b, model m1; the records numbered in ``leaky`` leak."""
    return [
        record(
            n, LEAKY if n in leaky else CLEAN, route=("a", "b")[n % 2], model="m1", tenant="acme"
        )
        for n in range(count)
    ]


def test_findings_fire_on_the_segment_they_concentrate_in_then_resolve(
    sessions: sessionmaker[Session],
) -> None:
    """Two leaks on route a of tenant acme: one ``policy_violation`` for that route, with
    the rule, its counts and the traces, and not a word of the address; the tenant's
    overall and model hold the same leaks among more answers and are explained by it.
    A window later, with no new finding, the alert resolves."""
    save_and_score(sessions, traffic({4, 10}))
    clock = datetime.now(UTC)
    sink = ListSink()

    (fired,) = check_policy(sessions, JUDGE.name, CONFIG, [sink], now=lambda: clock)

    assert (fired.rule, fired.state, fired.severity) == ("policy_violation", "firing", "critical")
    assert fired.segment == {"route": "a", "tenant": "acme"}
    details = fired.details
    assert (details["evaluations"], details["with_findings"]) == (20, 2)
    assert details["rules"] == [{"rule": "pii", "answers": 2, "findings": 2}]
    leaked = {record(n, LEAKY).trace_id for n in (4, 10)}
    assert {e["trace_id"] for e in details["examples"]} == leaked
    assert all(e["rules"] == ["pii"] for e in details["examples"])
    assert ADDRESS not in json.dumps(details) and "jane" not in json.dumps(details)
    assert sink.alerts == [fired]
    assert visible_to(fired, "acme") and not visible_to(fired, "globex")

    # The next run inside the window keeps it firing and tells nobody again.
    soon = clock + timedelta(minutes=5)
    (kept,) = check_policy(sessions, JUDGE.name, CONFIG, [sink], now=lambda: soon)
    assert kept.state == "firing" and sink.alerts == [fired]

    later = clock + WINDOW + timedelta(minutes=1)
    (resolved,) = check_policy(sessions, JUDGE.name, CONFIG, [sink], now=lambda: later)
    assert (resolved.id, resolved.state) == (fired.id, "resolved")
    assert resolved.details["with_findings"] == 0
    assert [a.state for a in sink.alerts] == ["firing", "resolved"]
    with sessions() as session:
        assert [a for a in store_alerts.open_alerts(session) if a.rule == "policy_violation"] == []


def test_findings_on_two_routes_raise_each_route_and_not_the_overall(
    sessions: sessionmaker[Session],
) -> None:
    """One leak on each route: both routes raise, the tenant's overall and the model hold
    nothing the routes do not, and answers without findings raise nothing."""
    save_and_score(sessions, traffic({4, 7}))

    changed = check_policy(sessions, JUDGE.name, CONFIG, now=lambda: datetime.now(UTC))

    assert sorted((a.segment["route"], a.state) for a in changed) == [
        ("a", "firing"),
        ("b", "firing"),
    ]
    with sessions() as session:
        counted = store_policy.policy_findings(
            session, JUDGE.name, datetime.now(UTC) - WINDOW, CONFIG.dimensions, CONFIG.partition
        )
    by_segment = {tuple(sorted(f.segment.items())): f for f in counted}
    overall = by_segment[(("tenant", "acme"),)]
    assert (overall.evaluations, len(overall.flagged), overall.root) == (40, 2, "tenant=acme")
    assert by_segment[(("model", "m1"), ("tenant", "acme"))].flagged == overall.flagged


def test_no_findings_raise_nothing(sessions: sessionmaker[Session]) -> None:
    """Clean answers: no segment is counted and no alert changes."""
    save_and_score(sessions, traffic(set(), 10))
    clock = datetime.now(UTC)

    assert check_policy(sessions, JUDGE.name, CONFIG, now=lambda: clock) == []
    with sessions() as session:
        found = store_policy.policy_findings(
            session, JUDGE.name, clock - WINDOW, CONFIG.dimensions, CONFIG.partition
        )
    assert found == []
