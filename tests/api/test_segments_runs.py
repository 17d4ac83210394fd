"""``/api/v1/segments`` serves the worker's last drift run, flagged stale when no worker
keeps it fresh, and never runs the detectors itself."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import func, select

from faithmon import drift
from faithmon.api.app import create_app
from faithmon.api.v1 import ReadOptions
from faithmon.ingest.pipeline import Pipeline
from faithmon.ingest.sampler import KeepAll
from faithmon.ingest.scrub import identity
from faithmon.jobs.drift import check_drift
from faithmon.model import segment_key
from faithmon.store import Sessions
from faithmon.store.tables import DriftRunRow, DriftStateRow
from tests.api.client import get
from tests.api.seed import CONFIG, JUDGE, seed
from tests.servers import serve_in_thread

# The dialect is not the point here: PostgreSQL runs in the second_backend tier.
pytestmark = pytest.mark.one_backend


def _segments(sessions: Sessions, stale_after: float) -> dict[str, Any]:
    pipeline = Pipeline(lambda batch: None, sampler=KeepAll(), scrubber=identity)
    reads = ReadOptions(judge=JUDGE, drift=CONFIG, stale_after=stale_after)
    with serve_in_thread(create_app(pipeline, sessions=sessions, reads=reads)) as url:
        return get(url, "/api/v1/segments")


def _detectors(view: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    return {item["segment"]: item["detectors"] for item in view["items"]}


def _drift_rows(sessions: Sessions) -> tuple[int, ...]:
    """Rows of every table a drift computation writes."""
    with sessions() as session:
        return tuple(
            session.execute(select(func.count()).select_from(table)).scalar_one()
            for table in (DriftRunRow, DriftStateRow)
        )


def test_a_read_never_runs_the_detectors(sessions: Sessions) -> None:
    """Before the worker's first drift run a read says so and writes nothing; after it,
    the run is served as the detectors read it."""
    seed(sessions, drift_run=False)
    before = _drift_rows(sessions)
    empty = _segments(sessions, stale_after=3600)
    assert empty["source"] == "none" and empty["items"] == [] and empty["computed_at"] is None
    assert _drift_rows(sessions) == before
    ran_at = datetime.now(UTC)
    run = check_drift(sessions, JUDGE, CONFIG, now=lambda: ran_at)
    assert run.readings
    served = _segments(sessions, stale_after=3600)
    assert served["source"] == "worker" and not served["stale"]
    assert datetime.fromisoformat(served["computed_at"]) == ran_at
    # The stored run reads as the detectors would: the same segments, rates and states.
    status = check_drift(sessions, JUDGE, CONFIG, dry_run=True)
    read = drift.summarize(status.readings, status.silent)["readings"]
    assert {segment_key(i["labels"]) for i in served["items"]} == {
        segment_key(r["labels"]) for r in read
    }
    states = {(segment_key(r["labels"]), r["stream"], r["state"]) for r in read}
    assert states == {
        (segment_key(i["labels"]), d["stream"], d["state"])
        for i in served["items"]
        for d in i["detectors"]
    }
    # Nothing was scored after the run: even an old run is not stale.
    assert not _segments(sessions, stale_after=0)["stale"]


def test_a_stale_run_is_served_and_says_so(sessions: Sessions) -> None:
    """A run older than the bound, with records scored since, is still what is served
    (a read does not recompute), flagged stale: no worker keeps it fresh."""
    seed(sessions, drift_run=False)
    # The run predates every evaluation the seed stored.
    check_drift(sessions, JUDGE, CONFIG, now=lambda: datetime.now(UTC) - timedelta(hours=1))
    kept = _segments(sessions, stale_after=3 * 3600)
    assert kept["source"] == "worker" and not kept["stale"]
    old = _segments(sessions, stale_after=60)
    assert old["source"] == "worker" and old["stale"]
    assert old["computed_at"] == kept["computed_at"] and old["items"] == kept["items"]
