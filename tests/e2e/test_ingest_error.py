"""A receiver that stops saving raises ingest_error, with real processes: ``faithmon serve``
writes its heartbeat to the store; when the records table disappears (a broken
migration) its saves fail while it keeps accepting into its spool, the health check fires
``saving_fails``, and once the table is back the spooled traces are saved and the alert
resolves. A receiver killed outright goes silent and fires ``silent``; one stopped cleanly
does not. Never a faithfulness reading."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from sqlalchemy import func, select, text
from sqlalchemy.orm import Session, sessionmaker

from faithmon.alerts import ListSink
from faithmon.jobs.health import HealthBounds, check_health
from faithmon.store import engine as store_engine
from faithmon.store import receivers as store_receivers
from faithmon.store.tables import RecordRow
from tests.e2e.helpers import free_port, wait_until_healthy
from tests.e2e.otlp import Traces, post
from tests.timing import wait_for

# The dialect is not the point here: PostgreSQL runs in the second_backend tier.
pytestmark = pytest.mark.one_backend

BOUNDS = HealthBounds(receiver_stale=timedelta(seconds=1))


@pytest.fixture
def env(database_url: str, tmp_path: Path) -> dict[str, str]:
    return {
        **os.environ,
        "FAITHMON_DATABASE_URL": database_url,
        "FAITHMON_SCRUB_KEY": "ingest-error-test-key-0123456789",
        "FAITHMON_ASSEMBLY_QUIET_SECONDS": "0.2",
        "FAITHMON_SPOOL_DIR": str(tmp_path / "spool"),
        "FAITHMON_ALERT_RECEIVER_STALE": "2",  # a beat every half second
    }


@pytest.fixture
def receivers() -> Iterator[list[subprocess.Popen[str]]]:
    started: list[subprocess.Popen[str]] = []
    yield started
    for process in started:
        if process.poll() is None:
            process.kill()
        process.communicate()


def start(env: dict[str, str], started: list[subprocess.Popen[str]]) -> str:
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "faithmon", "serve", "--port", str(port), "--grpc-port", "0"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    started.append(process)
    url = f"http://127.0.0.1:{port}"
    wait_until_healthy(url, process)
    return url


def health(sessions: sessionmaker[Session], sink: ListSink) -> dict[str, tuple[str, str]]:
    """Each receiver's open ingest_error: (state, cause)."""
    changed = check_health(sessions, "offline/v10", BOUNDS, [sink])
    return {
        a.segment["receiver"]: (a.state, str(a.details.get("cause")))
        for a in changed
        if a.rule == "ingest_error"
    }


def test_a_receiver_that_stops_saving_raises_ingest_error(
    env: dict[str, str], database_url: str, receivers: list[subprocess.Popen[str]]
) -> None:
    url = start(env, receivers)
    engine = store_engine.make_engine(database_url)
    sessions = store_engine.session_factory(engine)
    traces = Traces()

    def stored() -> int:
        with sessions() as session:
            return int(session.execute(select(func.count()).select_from(RecordRow)).scalar_one())

    def statuses() -> list[store_receivers.ReceiverStatus]:
        with sessions() as session:
            return store_receivers.receivers(session)

    try:
        assert post(url, traces.body(1)[1]) == 200
        wait_for(lambda: stored() == 1, 30, "the first trace stored")
        wait_for(lambda: statuses() and statuses()[0].records == 1, 30, "a heartbeat")
        sink = ListSink()
        assert health(sessions, sink) == {}

        with engine.begin() as connection:
            connection.execute(text("ALTER TABLE records RENAME TO records_away"))
        assert post(url, traces.body(2)[1]) == 200  # in the spool: a 200 is on disk
        wait_for(lambda: health(sessions, sink) != {}, 60, "ingest_error for failing saves", 0.5)
        (alert,) = [a for a in sink.alerts if a.rule == "ingest_error"]
        assert alert.state == "firing" and alert.details["cause"] == "saving_fails"
        assert alert.details["error"] and alert.details["backlog"] >= 1

        with engine.begin() as connection:
            connection.execute(text("ALTER TABLE records_away RENAME TO records"))
        wait_for(lambda: stored() == 2, 60, "the spooled trace saved")
        wait_for(
            lambda: health(sessions, sink).get(alert.segment["receiver"], ("",))[0] == "resolved",
            60,
            "ingest_error resolved",
            0.5,
        )

        killed = receivers[0]
        killed.send_signal(signal.SIGKILL)
        killed.wait(30)
        wait_for(
            lambda: health(sessions, sink).get(alert.segment["receiver"]) == ("firing", "silent"),
            60,
            "ingest_error for a silent receiver",
            0.5,
        )

        clean_url = start(env, receivers)
        assert post(clean_url, traces.body(3)[1]) == 200
        wait_for(lambda: stored() == 3, 30, "the third trace stored")
        receivers[1].send_signal(signal.SIGTERM)
        receivers[1].wait(60)
        clean = next(s for s in statuses() if s.name.endswith(clean_url.rsplit(":", 1)[1]))
        assert clean.stopped_at is not None
        changes = check_health(sessions, "offline/v10", replace_stale(BOUNDS))
        assert all(a.segment["receiver"] != clean.name for a in changes)
    finally:
        engine.dispose()


def replace_stale(bounds: HealthBounds) -> HealthBounds:
    """Bounds under which the cleanly stopped receiver's beat is long stale."""
    return HealthBounds(bounds.judge_error_rate, bounds.judge_error_min, timedelta(seconds=0.001))
