"""``/api/v1/segments`` serves the worker's last drift run while it is fresh, and runs the
detectors itself only when no fresh run exists (on SQLite and PostgreSQL)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from faithmon.api.app import create_app
from faithmon.api.v1 import ReadOptions
from faithmon.ingest.pipeline import Pipeline
from faithmon.ingest.sampler import KeepAll
from faithmon.ingest.scrub import identity
from faithmon.jobs.drift import check_drift
from faithmon.store import Sessions
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


def test_the_worker_run_is_served_while_fresh(sessions: Sessions) -> None:
    seed(sessions)
    live = _segments(sessions, stale_after=3600)
    assert live["source"] == "live" and live["baseline_ready"]
    ran_at = datetime.now(UTC)
    run = check_drift(sessions, JUDGE, CONFIG, now=lambda: ran_at)
    assert run.readings
    served = _segments(sessions, stale_after=3600)
    assert served["source"] == "worker"
    assert datetime.fromisoformat(served["computed_at"]) == ran_at
    # The stored run reads as the detectors would: the same segments, rates and states.
    assert _detectors(served) == _detectors(live)
    assert served["silent"] == live["silent"]
    # Nothing was scored after the run: even an old run is still the truth.
    assert _segments(sessions, stale_after=0)["source"] == "worker"


def test_a_stale_run_with_newer_scores_is_run_again(sessions: Sessions) -> None:
    seed(sessions)
    # The run predates every evaluation the seed stored.
    check_drift(sessions, JUDGE, CONFIG, now=lambda: datetime.now(UTC) - timedelta(hours=1))
    assert _segments(sessions, stale_after=3 * 3600)["source"] == "worker"
    fresh = _segments(sessions, stale_after=60)
    assert fresh["source"] == "live" and fresh["items"]
