"""The citation stream through the worker's drift job and the store, on SQLite and
PostgreSQL: records scored by the offline judge with the contracts, so their answers'
citation markers are checked and stored as citation accuracy."""

from __future__ import annotations

from datetime import timedelta

import pytest
from sqlalchemy.orm import Session, sessionmaker

from faithmon import drift
from faithmon.alerts import Policy
from faithmon.jobs import check_drift, score_pending
from faithmon.judge import OfflineJudge
from faithmon.judge.contracts import checked
from faithmon.model import Chunk, RagRecord, segment_key
from faithmon.store import baselines as store_baselines
from faithmon.store import records as store_records
from tests.timing import days_ago

# The dialect is not the point here: PostgreSQL runs in the second_backend tier.
pytestmark = pytest.mark.one_backend

T0 = days_ago(2)
JUDGE = checked(OfflineJudge())
FACT = "Order A17 shipped on 3 March by courier"
CHUNKS = (
    Chunk(0, FACT + ".", id="doc-orders"),
    Chunk(1, "Refunds take five working days.", id="doc-refunds"),
)
RIGHT = FACT + " [1]."
WRONG = FACT + " [2]."
"""Cites the refunds chunk: the claim is supported by the context, not by its citation."""
UNRESOLVED = FACT + " [7]."
PLAIN = FACT + "."

CONFIG = drift.DriftConfig(
    dimensions=("route",),
    threshold=6.0,
    baseline_records=60,
    baseline_days=0,
    segment_min_baseline=10,
    recovery_records=60,
    no_data_dimensions=(),
)


def record(n: int, answer: str, route: str) -> RagRecord:
    return RagRecord(
        trace_id=f"{n + 1:032x}",
        question="Where is order A17?",
        answer=answer,
        chunks=CHUNKS,
        labels={"route": route},
        started_at=T0 + timedelta(minutes=n),
    )


def traffic(first: int, count: int, citing: str) -> list[RagRecord]:
    """Routes ``cites`` (its answers carry ``citing``) and ``plain`` (never a marker) in turn."""
    return [
        record(n, citing if n % 2 else PLAIN, "cites" if n % 2 else "plain")
        for n in range(first, first + count)
    ]


def save_and_score(sessions: sessionmaker[Session], records: list[RagRecord]) -> None:
    with sessions.begin() as session:
        store_records.save_records(session, records)
    score_pending(sessions, JUDGE)


def test_citations_going_wrong_fire_citation_drift_while_faithfulness_stays_whole(
    sessions: sessionmaker[Session],
) -> None:
    """After a baseline of correct citations, route ``cites`` starts citing the wrong chunk
    (and once a chunk that does not exist): every answer is still supported, so only
    ``citation_drift`` fires, on that route, with the miscited claims and the chunks they
    name as evidence. Route ``plain`` never cites: it has no citation baseline, no
    citation detector and no alert."""
    after = traffic(60, 60, WRONG)
    after[1] = record(61, UNRESOLVED, "cites")
    save_and_score(sessions, traffic(0, 60, RIGHT) + after)

    run = check_drift(sessions, JUDGE.name, CONFIG, now=lambda: T0)

    assert run.baseline_ready
    assert [(a.rule, dict(a.segment), a.state) for a in run.changed] == [
        ("citation_drift", {"route": "cites"}, "firing")
    ]
    readings = {(segment_key(r.segment), r.stream): r for r in run.readings}
    cites = readings[("route=cites", "citation")]
    assert cites.records == 30 and cites.rate == 1.0 and cites.baseline_source == "own"
    assert readings[("route=cites", "unsupported")].rate == 0.0
    assert readings[("route=cites", "unsupported")].level == "ok"
    # Every citing record is route=cites: the route explains the overall.
    assert readings[("", "citation")].explained_by == {"route": "cites"}
    assert ("route=plain", "citation") not in readings
    # The offline judge measures context relevance: the retrieval stream reads there too.
    assert {s for k, s in readings if k == "route=plain"} == {
        "unsupported",
        "critical",
        "retrieval",
    }

    (alert,) = run.changed
    details = alert.details
    assert details["stream"] == "citation" and details["baseline_records"] == 30
    assert details["baseline_rate"] < 0.05 and details["current_rate"] == 1.0
    examples = {e["trace_id"]: e for e in details["examples"]}
    assert examples and all(e["unsupported_claims"] == [] for e in examples.values())
    assert all(e["miscited_claims"] == [FACT + "."] for e in examples.values())
    cited = {c["citation"]: c["marked_chunk_ids"] for e in examples.values() for c in e["claims"]}
    assert cited["wrong"] == ["doc-refunds"]
    assert all(c["verdict"] == "supported" for e in examples.values() for c in e["claims"])

    with sessions() as session:
        frozen = store_baselines.load_baselines(session, JUDGE.name)
    assert frozen is not None
    assert (frozen.segments["route=cites"].cited, frozen.segments["route=cites"].miscited) == (
        30,
        0,
    )
    assert frozen.segments["route=plain"].cited == 0
    assert frozen.segments[""].cited == 30


def test_a_deployment_that_never_cites_has_no_citation_stream(
    sessions: sessionmaker[Session],
) -> None:
    """No answer cites: no segment has a citation baseline or detector, the drift run
    reads the streams every record observes, and nothing fires."""
    save_and_score(sessions, [record(n, PLAIN, ("a", "b")[n % 2]) for n in range(120)])

    run = check_drift(sessions, JUDGE.name, CONFIG, now=lambda: T0)

    assert run.baseline_ready and run.changed == ()
    assert {r.stream for r in run.readings} == {"unsupported", "critical", "retrieval"}
    with sessions() as session:
        frozen = store_baselines.load_baselines(session, JUDGE.name)
    assert frozen is not None and all(b.cited == 0 for b in frozen.segments.values())


def test_citation_alert_resolves_and_restarts_its_detector(
    sessions: sessionmaker[Session],
) -> None:
    """Once the route cites correctly again for two runs the alert resolves, and its
    citation detector restarts after the records it had seen."""
    save_and_score(sessions, traffic(0, 60, RIGHT) + traffic(60, 30, WRONG))
    first = check_drift(sessions, JUDGE.name, CONFIG, now=lambda: T0)
    assert [(a.rule, a.state) for a in first.changed] == [("citation_drift", "firing")]

    save_and_score(sessions, traffic(90, 140, RIGHT))
    policy = Policy(recovery_runs=2)
    runs = [check_drift(sessions, JUDGE.name, CONFIG, now=lambda: T0, policy=policy)]
    runs.append(check_drift(sessions, JUDGE.name, CONFIG, now=lambda: T0, policy=policy))
    states = [[(a.rule, a.state) for a in r.changed] for r in runs]
    assert states == [[("citation_drift", "firing")], [("citation_drift", "resolved")]]

    again = check_drift(sessions, JUDGE.name, CONFIG, now=lambda: T0)
    reading = next(
        r for r in again.readings if r.segment == {"route": "cites"} and r.stream == "citation"
    )
    assert (reading.level, reading.records, reading.statistic) == ("ok", 0, 0.0)
