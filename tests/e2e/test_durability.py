"""Durability on PostgreSQL with real processes: poison values, a database outage, SIGKILL.

A 200 from the receiver means the trace is on disk: it is stored whatever its
values, whether the database was down when it arrived, and whether the receiver
was killed before it could save it.
"""

from __future__ import annotations

import http.client
import json
import math
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from sqlalchemy import func, make_url, select, text

import faithmon_instrumentation as fm
from faithmon.store import engine as store_engine
from faithmon.store.tables import RecordRow
from tests.e2e.helpers import faithmon, free_port, wait_until_healthy
from tests.e2e.otlp import ANSWER, Traces, post
from tests.e2e.proxy import CuttableProxy
from tests.timing import wait_for

pytestmark = pytest.mark.postgres


@pytest.fixture
def base_env(postgres_url: str, tmp_path: Path) -> dict[str, str]:
    return {
        **os.environ,
        "FAITHMON_DATABASE_URL": postgres_url,
        "FAITHMON_SCRUB_KEY": "durability-test-key-0123456789",
        "FAITHMON_ASSEMBLY_QUIET_SECONDS": "0.2",
        "FAITHMON_SPOOL_DIR": str(tmp_path / "spool"),
    }


def start(env: dict[str, str]) -> tuple[str, subprocess.Popen[str]]:
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "faithmon", "serve", "--port", str(port), "--grpc-port", "0"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    url = f"http://127.0.0.1:{port}"
    wait_until_healthy(url, process)
    return url, process


def stored(database_url: str) -> tuple[int, int]:
    """(rows, distinct trace ids) in the records table."""
    engine = store_engine.make_engine(database_url)
    try:
        with engine.connect() as connection:
            rows = connection.execute(select(func.count()).select_from(RecordRow)).scalar_one()
            distinct = connection.execute(
                select(func.count(func.distinct(RecordRow.trace_id)))
            ).scalar_one()
    finally:
        engine.dispose()
    return rows, distinct


def proxied(base_env: dict[str, str], proxy: CuttableProxy, **settings: str) -> dict[str, str]:
    """The receiver's environment with its database reached through ``proxy``."""
    target = make_url(base_env["FAITHMON_DATABASE_URL"])
    through = target.set(port=proxy.port)
    return {
        **base_env,
        "FAITHMON_DATABASE_URL": through.render_as_string(hide_password=False),
        **settings,
    }


def health(url: str) -> tuple[int, str]:
    """/healthz's status code and the status it reports."""
    parts = urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=5)
    try:
        connection.request("GET", "/healthz")
        response = connection.getresponse()
        return response.status, json.loads(response.read())["status"]
    finally:
        connection.close()


def healthz(url: str) -> int:
    return health(url)[0]


def test_poison_values_never_stop_ingest(
    base_env: dict[str, str], postgres_url: str, servers: list[subprocess.Popen[str]]
) -> None:
    """NUL in text and labels, NaN and infinite scores, an over-long keep reason: each trace
    is stored with its repairs listed, and the traces after it are stored too."""
    faithmon(base_env, "db", "upgrade")
    url, process = start(base_env)
    servers.append(process)
    fm.setup(endpoint=url, service_name="poison-app")
    try:
        with fm.rag_span("Where\x00 is order A17?", route="bill\x00ing") as rag:
            rag.record_retrieval([{"text": ANSWER, "score": math.nan, "id": "kb\x00-1"}])
            rag.record_answer(ANSWER + "\x00", model="m1")
        with fm.rag_span("Where is order A18?", route="billing") as rag:
            rag.record_retrieval([{"text": ANSWER, "score": math.inf}, {"text": "x", "score": 1}])
            rag.keep("k" * 5000)
            rag.record_answer(ANSWER, model="m1")
        for n in range(5):
            with fm.rag_span(f"Where is order B{n}?", route="billing") as rag:
                rag.record_retrieval([{"text": ANSWER, "score": 0.5}])
                rag.record_answer(ANSWER, model="m1")
        assert fm.flush()
    finally:
        fm.shutdown()
    wait_for(lambda: stored(postgres_url)[0] == 7, 60, "7 stored records")
    assert healthz(url) == 200
    engine = store_engine.make_engine(postgres_url)
    with engine.connect() as connection:
        rows = connection.execute(
            select(RecordRow.question, RecordRow.status, RecordRow.repairs, RecordRow.labels)
        ).all()
    engine.dispose()
    assert {row.status for row in rows} == {"pending"}
    repaired = [row for row in rows if row.repairs]
    assert len(repaired) == 2
    assert any(row.question == "Where is order A17?" for row in rows)
    assert all("\x00" not in str(row) for row in rows)


def test_a_database_outage_loses_nothing_the_shim_sent(
    base_env: dict[str, str], postgres_url: str, servers: list[subprocess.Popen[str]]
) -> None:
    """Through the shim's own exporter: the database goes away for seconds mid-traffic,
    the receiver keeps acknowledging into its spool, and every trace is stored after."""
    faithmon(base_env, "db", "upgrade")
    target = make_url(postgres_url)
    with CuttableProxy(target.host or "127.0.0.1", target.port or 5432) as proxy:
        env = proxied(base_env, proxy)
        url, process = start(env)
        servers.append(process)
        fm.setup(endpoint=url, service_name="outage-app")
        sent = 0
        healthy_during_outage = []
        try:
            for phase in ("before", "outage", "after"):
                if phase == "outage":
                    proxy.cut()
                if phase == "after":
                    proxy.restore()
                for _ in range(100):
                    with fm.rag_span(f"Where is order C{sent}?", route="billing") as rag:
                        rag.record_retrieval([{"text": ANSWER, "score": 0.5}])
                        rag.record_answer(ANSWER, model="m1")
                    sent += 1
                    time.sleep(0.02)  # 50 traces/s, the app's pace, not a wait
                if phase == "outage":
                    assert fm.flush()
                    # The outage lasts until the receiver has met it (its store failed),
                    # however slow the machine: made, not hoped for.
                    wait_for(
                        lambda: health(url)[1] == "degraded", 60, "the receiver to meet the outage"
                    )
                    healthy_during_outage.append(healthz(url))
            assert fm.flush()
        finally:
            fm.shutdown()
        wait_for(lambda: stored(postgres_url)[0] >= sent, 60, f"{sent} stored records")
    assert stored(postgres_url) == (sent, sent)
    assert healthy_during_outage == [200]
    process.send_signal(signal.SIGTERM)
    _, log = process.communicate(timeout=60)
    assert "failed (StoreUnavailable); will retry" in log, "the outage reached the receiver"


def test_sigkill_loses_no_acknowledged_trace_and_stores_none_twice(
    base_env: dict[str, str], postgres_url: str, servers: list[subprocess.Popen[str]]
) -> None:
    """Two clients post as fast as they can; the receiver is killed with SIGKILL; the
    restarted receiver replays its spool: every acknowledged trace is stored, once."""
    faithmon(base_env, "db", "upgrade")
    url, process = start(base_env)
    servers.append(process)
    traces = Traces()
    acknowledged: set[str] = set()
    lock = threading.Lock()
    stop = threading.Event()
    counter = iter(range(10**9))

    def client() -> None:
        while not stop.is_set():
            trace_id, body = traces.body(next(counter))
            try:
                status = post(url, body)
            except OSError:
                continue  # killed mid-request: not acknowledged
            if status == 200:
                with lock:
                    acknowledged.add(trace_id)

    clients = [threading.Thread(target=client) for _ in range(2)]
    for thread in clients:
        thread.start()
    wait_for(lambda: len(acknowledged) >= 300, 60, "300 acknowledged traces")
    # The store is held back (no insert commits while the table is locked) before the
    # kill, so some acknowledged traces exist only in the spool: the condition the
    # replay is tested on is made, not left to the machine's speed.
    engine = store_engine.make_engine(postgres_url)
    try:
        with engine.connect() as blocker:
            blocker.execute(text("LOCK TABLE records IN EXCLUSIVE MODE"))
            held_from = len(acknowledged)
            wait_for(lambda: len(acknowledged) >= held_from + 100, 60, "100 acknowledged more")
            process.send_signal(signal.SIGKILL)
            process.wait(timeout=30)
            stop.set()
            for thread in clients:
                thread.join(timeout=30)
            before_restart = stored(postgres_url)[0]
            blocker.rollback()
    finally:
        engine.dispose()
    assert before_restart < len(acknowledged), "the kill came before everything was saved"

    _, restarted = start(base_env)
    servers.append(restarted)
    wait_for(lambda: stored(postgres_url)[0] >= len(acknowledged), 60, "replayed records")
    rows, distinct = stored(postgres_url)
    assert rows == distinct
    engine = store_engine.make_engine(postgres_url)
    with engine.connect() as connection:
        ids = set(connection.execute(select(RecordRow.trace_id)).scalars())
    engine.dispose()
    assert acknowledged <= ids


def test_a_hung_database_stalls_neither_health_nor_acknowledgement(
    base_env: dict[str, str], postgres_url: str, servers: list[subprocess.Popen[str]]
) -> None:
    """The database accepts and never answers (a blackhole, not a refusal): /healthz and
    keyed exports keep answering past the key ring's refresh, since keys are re-read in
    the background and a new connection is bounded by FAITHMON_DB_CONNECT_TIMEOUT.
    (Storing it all once the database answers: the watchdog test below.)"""
    faithmon(base_env, "db", "upgrade")
    key = json.loads(faithmon(base_env, "keys", "create", "--scopes", "ingest", "--json"))["key"]
    target = make_url(postgres_url)
    with CuttableProxy(target.host or "127.0.0.1", target.port or 5432) as proxy:
        env = proxied(base_env, proxy, FAITHMON_DB_CONNECT_TIMEOUT="2")
        url, process = start(env)
        servers.append(process)
        fm.setup(endpoint=url, service_name="hung-app", api_key=key)
        sent = 0
        try:
            proxy.hang()
            # Past the ring's 5 s refresh, each health check (the client waits 5 s) and
            # each export (flushed one by one: the exports pace the loop) is answered.
            until = time.monotonic() + 8
            while time.monotonic() < until:
                assert healthz(url) == 200
                with fm.rag_span(f"Where is order H{sent}?", route="billing") as rag:
                    rag.record_retrieval([{"text": ANSWER, "score": 0.5}])
                    rag.record_answer(ANSWER, model="m1")
                sent += 1
                assert fm.flush(timeout_millis=10_000), "an export went unanswered"
        finally:
            fm.shutdown()
            process.kill()
            _, log = process.communicate(timeout=60)
    assert sent >= 10
    assert "cannot read API keys (OperationalError)" in log, "the refresh met the silence"


def test_sigterm_while_the_database_hangs_exits_and_the_next_start_stores_the_rest(
    base_env: dict[str, str], postgres_url: str, servers: list[subprocess.Popen[str]]
) -> None:
    """A save waits on a blackholed database; SIGTERM ends the receiver once its drain
    deadline passes, and what it acknowledged but could not save stays in its spool: the
    next start (the database answering again) stores every trace, once."""
    faithmon(base_env, "db", "upgrade")
    target = make_url(postgres_url)
    traces = Traces()
    with CuttableProxy(target.host or "127.0.0.1", target.port or 5432) as proxy:
        env = proxied(base_env, proxy, FAITHMON_DB_CONNECT_TIMEOUT="2", FAITHMON_DRAIN_SECONDS="3")
        url, process = start(env)
        servers.append(process)
        acknowledged: set[str] = set()
        for n in range(40):
            if n == 10:
                # The first ten are stored: the receiver's pool holds live connections,
                # which the blackhole then silences mid-conversation.
                wait_for(lambda: stored(postgres_url)[0] >= 10, 60, "10 stored records")
                proxy.hang()
            trace_id, body = traces.body(n)
            assert post(url, body) == 200
            acknowledged.add(trace_id)
        wait_for(lambda: proxy.swallowed > 0, 60, "a statement sent into the silence")
        process.send_signal(signal.SIGTERM)
        _, log = process.communicate(timeout=60)  # never returned before the drain deadline
    assert "saving outlasted the drain (3.0 s)" in log
    assert stored(postgres_url)[0] < 40
    url, process = start(base_env)  # the database answers again
    servers.append(process)
    wait_for(lambda: stored(postgres_url)[0] >= 40, 60, "40 stored records")
    assert stored(postgres_url) == (40, 40)
    assert _trace_ids(postgres_url) == acknowledged


def _trace_ids(database_url: str) -> set[str]:
    engine = store_engine.make_engine(database_url)
    try:
        with engine.connect() as connection:
            return set(connection.execute(select(RecordRow.trace_id)).scalars())
    finally:
        engine.dispose()


def test_a_receiver_starts_while_the_database_is_down_and_stores_once_it_answers(
    base_env: dict[str, str], postgres_url: str, servers: list[subprocess.Popen[str]]
) -> None:
    """A restart during an outage: the receiver starts, knows its keys from beside its
    spool, acknowledges keyed exports, and checks the schema and stores them all once the
    database answers. Before, it refused to start and the port stayed closed."""
    faithmon(base_env, "db", "upgrade")
    key = json.loads(faithmon(base_env, "keys", "create", "--scopes", "ingest", "--json"))["key"]
    target = make_url(postgres_url)
    traces = Traces()
    with CuttableProxy(target.host or "127.0.0.1", target.port or 5432) as proxy:
        env = proxied(base_env, proxy, FAITHMON_DB_CONNECT_TIMEOUT="2")
        url, process = start(env)  # reads the keys once, while the database answers
        process.send_signal(signal.SIGTERM)
        process.communicate(timeout=60)
        proxy.cut()
        url, process = start(env)
        servers.append(process)
        parts = urlsplit(url)
        for n in range(20):
            _, body = traces.body(n)
            connection = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=10)
            headers = {"Content-Type": "application/x-protobuf", "Authorization": f"Bearer {key}"}
            connection.request("POST", "/v1/traces", body, headers)
            assert connection.getresponse().status == 200
            connection.close()
        assert stored(postgres_url) == (0, 0)
        proxy.restore()
        wait_for(lambda: stored(postgres_url)[0] >= 20, 60, "20 stored records")
        assert stored(postgres_url) == (20, 20)
        process.send_signal(signal.SIGTERM)
        _, log = process.communicate(timeout=60)
    assert "the database does not answer" in log
    assert key not in log


def test_a_write_sent_into_a_hung_database_is_abandoned_and_retried(
    base_env: dict[str, str], postgres_url: str, servers: list[subprocess.Popen[str]]
) -> None:
    """A save already sent when the database went silent waits on its socket; past the
    statement timeout and a margin the watchdog closes that connection, and once the
    database answers again every acknowledged trace is stored, without a restart."""
    faithmon(base_env, "db", "upgrade")
    target = make_url(postgres_url)
    traces = Traces()
    with CuttableProxy(target.host or "127.0.0.1", target.port or 5432) as proxy:
        env = proxied(
            base_env, proxy, FAITHMON_DB_CONNECT_TIMEOUT="1", FAITHMON_DB_STATEMENT_TIMEOUT="1"
        )
        url, process = start(env)
        servers.append(process)
        for n in range(30):
            if n == 10:
                wait_for(lambda: stored(postgres_url)[0] >= 10, 60, "10 stored records")
                proxy.hang()
            assert post(url, traces.body(n)[1]) == 200
        wait_for(lambda: proxy.swallowed > 0, 60, "a statement sent into the silence")
        # The silenced connections stay silent: only new ones reach the database.
        proxy.restore()
        wait_for(lambda: stored(postgres_url)[0] >= 30, 90, "30 stored records")
        assert stored(postgres_url) == (30, 30)
        process.send_signal(signal.SIGTERM)
        _, log = process.communicate(timeout=60)
    assert "outlasted 6 s without an answer" in log
