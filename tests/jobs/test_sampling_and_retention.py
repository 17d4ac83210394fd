"""Sampling counts and drops reach the store; explain reads them; retention rolls up."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import pytest
from click.testing import CliRunner
from sqlalchemy import select, update
from sqlalchemy.orm import Session, sessionmaker

from faithmon.cli import main, wiring
from faithmon.config import Settings
from faithmon.ingest.spans import IngestSpan
from faithmon.jobs import apply_retention, score_pending
from faithmon.judge import OfflineJudge
from faithmon.model import Chunk, DroppedTrace, RagRecord, SamplingTally
from faithmon.store import records as store_records
from faithmon.store import retention as store_retention
from faithmon.store import sampling as store_sampling
from faithmon.store.tables import RecordRow
from tests.store.factory import stored_records
from tests.timing import days_ago

# The dialect is not the point here: PostgreSQL runs in the second_backend tier.
pytestmark = pytest.mark.one_backend

T0 = days_ago(1, hour=9)  # on the hour, so an hourly tally's hour equals it
AGO = T0 - timedelta(days=40)  # when the old records were received: retention counts from it


def test_pipeline_counts_every_decision_and_stores_drops(
    database_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Kept and dropped records are counted per hour, segment and reason; drops are stored."""
    settings = Settings.from_env(
        {"FAITHMON_SCRUB_KEY": "k" * 20, "FAITHMON_SAMPLE_EXCLUDE": "route=internal"},
        database_url=database_url,
    )
    with wiring.open_store(settings) as sessions:
        pipeline = wiring.store_pipeline(settings, sessions, quiet_seconds=0)
        spans = []
        for n, route in enumerate(["billing", "billing", "internal"]):
            spans.append(
                IngestSpan(
                    trace_id=f"{n + 1:032x}",
                    span_id=f"{n + 1:016x}",
                    parent_span_id=None,
                    name="rag.request",
                    start_ns=int(T0.timestamp() * 1e9),
                    end_ns=1,
                    attributes={
                        "faithmon.role": "request",
                        "openinference.span.kind": "CHAIN",
                        "input.value": "q",
                        "output.value": "a",
                        "faithmon.label.route": route,
                    },
                )
            )
        pipeline.submit(spans)
        pipeline.flush_all()
        with sessions() as session:
            counts = store_sampling.sampling_counts(session)
            dropped = store_sampling.decision_for(session, f"{3:032x}")
            kept = store_sampling.decision_for(session, f"{1:032x}")
    assert sorted((c.segment.get("route"), c.reason, c.count) for c in counts) == [
        ("billing", "rule:empty_retrieval", 2),
        ("internal", "filtered", 1),
    ]
    assert counts[0].hour == T0
    assert dropped is not None and dropped[0] == "dropped" and dropped[1]["reason"] == "filtered"
    assert kept is not None and kept[0] == "kept" and kept[1]["reason"] == "rule:empty_retrieval"

    monkeypatch.setenv("FAITHMON_DATABASE_URL", database_url)
    runner = CliRunner()
    explained = runner.invoke(main, ["sample", "explain", f"{3:032x}"])
    assert explained.exit_code == 0 and "dropped (filtered)" in explained.stdout
    unseen = runner.invoke(main, ["sample", "explain", "f" * 32])
    assert "not seen" in unseen.stdout
    listed = json.loads(runner.invoke(main, ["sample", "counts", "--json"]).stdout)
    assert {row["reason"] for row in listed} == {"rule:empty_retrieval", "filtered"}


def old_record(n: int, days_ago: int, route: str) -> RagRecord:
    return RagRecord(
        trace_id=f"{n + 1:032x}",
        question="q",
        answer="Order A17 shipped." if n % 2 else "It was cancelled.",
        chunks=(Chunk(0, "Order A17 shipped."),),
        labels={"route": route},
        started_at=T0 - timedelta(days=days_ago),
    )


def test_retention_deletes_old_records_and_keeps_aggregates(
    sessions: sessionmaker[Session],
) -> None:
    """Records past the window go, with their evaluations; daily aggregates stay."""
    with sessions.begin() as session:
        store_records.save_records(session, [old_record(n, 40, "billing") for n in range(4)], AGO)
        store_records.save_records(session, [old_record(10, 1, "billing")], T0)
    score_pending(sessions, OfflineJudge())
    deleted = apply_retention(sessions, 30, ("route",), OfflineJudge().name, now=lambda: T0)
    assert deleted == 4
    with sessions() as session:
        left = stored_records(session)
        daily = store_retention.segment_daily(session)
    assert [r.record.trace_id for r in left] == [f"{11:032x}"]
    day = (T0 - timedelta(days=40)).date().isoformat()
    assert {
        (d["day"], json.dumps(d["segment"]), d["records"], d["scored"], d["unsupported"])
        for d in daily
    } == {(day, "{}", 4, 4, 2), (day, '{"route": "billing"}', 4, 4, 2)}
    assert apply_retention(sessions, 0, ("route",), "j", now=lambda: T0) == 0


def _trace(n: int) -> str:
    return f"{n + 1:032x}"


def test_retention_keeps_leased_and_pending_records(sessions: sessionmaker[Session]) -> None:
    """Past the cutoff a scored record goes; a leased or a pending one stays for its worker."""
    with sessions.begin() as session:
        store_records.save_records(session, [old_record(n, 40, "billing") for n in range(2)], AGO)
    score_pending(sessions, OfflineJudge())
    with sessions.begin() as session:
        store_records.save_records(
            session, [old_record(n, 40, "billing") for n in range(2, 5)], AGO
        )
        leased = store_records.claim_pending(session, "worker-a", limit=2, lease_seconds=300)
    assert [record.trace_id for _, record in leased] == [_trace(2), _trace(3)]
    with sessions.begin() as session:
        # Held by a worker whatever its status says: that worker may still settle it.
        session.execute(
            update(RecordRow)
            .where(RecordRow.trace_id == _trace(1))
            .values(lease_owner="worker-b", lease_expires=T0 - timedelta(days=1))
        )

    assert apply_retention(sessions, 30, ("route",), OfflineJudge().name, now=lambda: T0) == 1

    with sessions() as session:
        left = {row.trace_id: row.status for row in session.scalars(select(RecordRow))}
        daily = store_retention.segment_daily(session)
    assert left == {
        _trace(1): "scored",
        _trace(2): "pending",
        _trace(3): "pending",
        _trace(4): "pending",
    }
    assert {d["records"] for d in daily} == {1}


def test_retention_deletes_old_sampling_counts_and_drops(sessions: sessionmaker[Session]) -> None:
    """Hourly tallies and dropped traces past the cutoff go; recent ones stay."""
    old, recent = T0 - timedelta(days=40), T0 - timedelta(days=1)
    with sessions.begin() as session:
        store_sampling.save_sampling(
            session,
            [SamplingTally(at, {"route": "billing"}, "filtered", 3) for at in (old, recent)],
            [DroppedTrace(_trace(n), "filtered", {}, at) for n, at in enumerate((old, recent))],
        )
    # No record is old enough: the tallies and drops still go.
    assert apply_retention(sessions, 30, ("route",), OfflineJudge().name, now=lambda: T0) == 0
    with sessions() as session:
        counts = store_sampling.sampling_counts(session)
        gone = store_sampling.decision_for(session, _trace(0))
        kept = store_sampling.decision_for(session, _trace(1))
    assert [c.hour for c in counts] == [recent]
    assert gone is None and kept is not None and kept[0] == "dropped"


def test_generated_key_is_written_once_with_private_mode(tmp_path: Path) -> None:
    """Without FAITHMON_SCRUB_KEY a key file is made (0600) and reused after."""
    settings = Settings.from_env({"FAITHMON_SCRUB_KEY_FILE": str(tmp_path / "k" / "scrub.key")})
    first = wiring.scrub_key(settings)
    second = wiring.scrub_key(settings)
    assert first == second and len(first) >= 32
    assert (tmp_path / "k" / "scrub.key").stat().st_mode & 0o777 == 0o600
