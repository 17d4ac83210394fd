"""Scale-out and graceful shutdown, with real processes started by deploy/launch.py.

A fleet of 2 receivers and 3 workers shares one PostgreSQL database. 1,000 RAG traces
(20,000 in the scale tier, ``pytest -m scale``),
written by the shim and encoded as OTLP protobuf, are split between the receivers by
trace id, as the Collector's loadbalancing exporter does. During the load one receiver
is killed with SIGKILL and started again (its spool replays what it acknowledged), and
one worker is killed with SIGKILL while it holds leases. Afterwards every trace is stored
once, every record evaluated once, no lease is left, and drift (baselines, readings,
alerts) equals what one in-process pipeline computes from the same traffic on SQLite.
"""

from __future__ import annotations

import importlib.util
import os
import random
import socket
import sys
import threading
import time
import urllib.error
import urllib.request
from collections import defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from sqlalchemy import Engine, func, select, text
from sqlalchemy.orm import Session, sessionmaker

import faithmon_instrumentation as fm
from faithmon.alerts import to_json
from faithmon.cli import wiring
from faithmon.config import Settings
from faithmon.ingest import otlp
from faithmon.jobs import DriftRun, check_drift, score_pending
from faithmon.model import FrozenBaselines
from faithmon.store import alerts as store_alerts
from faithmon.store import baselines as store_baselines
from faithmon.store import engine as store_engine
from faithmon.store import records as store_records
from faithmon.store.tables import EvaluationRow, RecordRow
from tests.databases import waiting_on_a_lock
from tests.openai_server import SupportingJudge
from tests.servers import serve_in_thread
from tests.timing import wait_for

ROOT = Path(__file__).resolve().parents[2]
TRACES_PER_BODY = 25
PROTOBUF = {"Content-Type": "application/x-protobuf"}


def load_launcher() -> ModuleType:
    spec = importlib.util.spec_from_file_location("faithmon_launch", ROOT / "deploy" / "launch.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


launch = load_launcher()


def free_ports(count: int) -> int:
    """A base port whose ``count`` consecutive ports are free on 127.0.0.1."""
    for _ in range(100):
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            base = int(probe.getsockname()[1])
        if base + count > 65535:
            continue
        sockets = []
        try:
            for port in range(base, base + count):
                sock = socket.socket()
                sockets.append(sock)
                sock.bind(("127.0.0.1", port))
            return base
        except OSError:
            continue
        finally:
            for sock in sockets:
                sock.close()
    raise RuntimeError(f"no {count} consecutive free ports")


# --- databases -------------------------------------------------------------------------


@pytest.fixture
def pg_engine(postgres_url: str) -> Iterator[Engine]:
    engine = store_engine.make_engine(postgres_url)
    store_engine.upgrade(engine)
    yield engine
    engine.dispose()


@dataclass(frozen=True)
class Tally:
    records: int
    distinct_traces: int
    evaluations: int
    evaluated_records: int
    pending: int
    leased: int


def tally(sessions: sessionmaker[Session]) -> Tally:
    with sessions() as session:

        def count(query: Any) -> int:
            return int(session.scalar(query) or 0)

        return Tally(
            records=count(select(func.count()).select_from(RecordRow)),
            distinct_traces=count(select(func.count(func.distinct(RecordRow.trace_id)))),
            evaluations=count(select(func.count()).select_from(EvaluationRow)),
            evaluated_records=count(select(func.count(func.distinct(EvaluationRow.record_id)))),
            pending=count(
                select(func.count()).select_from(RecordRow).where(RecordRow.status == "pending")
            ),
            leased=count(
                select(func.count())
                .select_from(RecordRow)
                .where(RecordRow.lease_owner.is_not(None))
            ),
        )


# --- traffic ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Traffic:
    trace_ids: list[str]
    bodies: dict[int, list[bytes]]  # receiver index → OTLP bodies of whole traces
    all_bodies: list[bytes]  # the same traces in the order they were made


def make_traffic(count: int, receivers: int, seed: int = 20261129) -> Traffic:
    """``count`` shim traces; from the middle on, half of the billing answers invent facts."""
    rng = random.Random(seed)
    exporter = InMemorySpanExporter()
    fm.setup(service_name="scale-out", processors=[SimpleSpanProcessor(exporter)], export=False)
    try:
        for n in range(count):
            route = rng.choice(("billing", "shipping"))
            model = rng.choice(("m-a", "m-b"))
            order = f"A{n}"
            question = f"Where is order {order}?"
            if rng.random() < 0.1:
                question += f" Write to buyer{n}@example.com."
            fact = f"Order {order} shipped on 3 March by courier."
            bad = rng.random() < (0.5 if n >= count // 2 and route == "billing" else 0.05)
            answer = fact
            if bad:
                answer += f" A refund of {n % 90 + 10} euros reaches Lisbon on Friday."
            with fm.rag_span(question, route=route, tenant=f"t{n % 3}") as rag:
                rag.record_retrieval([fact, "Returns are free within 30 days."], retriever="kb")
                rag.record_answer(answer, model=model)
    finally:
        fm.shutdown()
    by_trace: dict[str, list[ReadableSpan]] = defaultdict(list)
    for span in exporter.get_finished_spans():
        assert span.context is not None
        by_trace[f"{span.context.trace_id:032x}"].append(span)
    assert len(by_trace) == count
    trace_ids = list(by_trace)
    routed: dict[int, list[list[ReadableSpan]]] = defaultdict(list)
    for trace_id in trace_ids:
        # What the loadbalancing exporter guarantees: one trace id, one receiver.
        routed[int(trace_id, 16) % receivers].append(by_trace[trace_id])

    def encode(traces: Sequence[list[ReadableSpan]]) -> list[bytes]:
        return [
            encode_spans(
                [s for t in traces[i : i + TRACES_PER_BODY] for s in t]
            ).SerializeToString()
            for i in range(0, len(traces), TRACES_PER_BODY)
        ]

    return Traffic(
        trace_ids=trace_ids,
        bodies={r: encode(traces) for r, traces in routed.items()},
        all_bodies=encode([by_trace[t] for t in trace_ids]),
    )


class Sender(threading.Thread):
    """POSTs bodies to one receiver in order, as an exporter with retries does.

    503 (with Retry-After) and connection failures (a receiver restarting) are
    retried, bounded by ``deadline``; any other answer fails the test.
    """

    def __init__(
        self, url: str, bodies: Sequence[bytes], deadline: float, pause_at: int | None = None
    ) -> None:
        super().__init__(name=f"sender {url}", daemon=True)
        self.url = url + "/v1/traces"
        self.bodies = bodies
        self.deadline = deadline
        self.sent = 0
        self.retries: dict[str, int] = defaultdict(int)
        self.error: BaseException | None = None
        # With pause_at, the sender stops after that many bodies (``paused`` is set) until
        # ``resume`` is set: the test restarts the receiver at a known point of its load.
        self.pause_at = pause_at
        self.paused = threading.Event()
        self.resume = threading.Event()

    def run(self) -> None:
        try:
            for index, body in enumerate(self.bodies):
                if index == self.pause_at:
                    self.paused.set()
                    if not self.resume.wait(timeout=max(0.0, self.deadline - time.monotonic())):
                        raise TimeoutError("never resumed")
                self._post(body)
                self.sent += 1
        except BaseException as exc:
            self.error = exc

    def _post(self, body: bytes) -> None:
        while True:
            wait = 0.1
            try:
                request = urllib.request.Request(self.url, body, PROTOBUF, method="POST")
                with urllib.request.urlopen(request, timeout=30) as response:
                    assert response.status == 200
                    return
            except urllib.error.HTTPError as exc:
                if exc.code not in (429, 502, 503, 504):
                    raise
                self.retries[str(exc.code)] += 1
                wait = min(float(exc.headers.get("Retry-After") or 1), 1.0)
            except OSError as exc:  # refused or reset while a receiver restarts
                self.retries[type(exc).__name__] += 1
            if time.monotonic() > self.deadline:
                raise TimeoutError(f"{self.url}: not accepted before the deadline")
            time.sleep(wait)


def fleet_env(database_url: str, run_dir: Path, **extra: str) -> dict[str, str]:
    return {
        **os.environ,
        "FAITHMON_DATABASE_URL": database_url,
        "FAITHMON_SCRUB_KEY": "scale-out-test-key-0123456789",
        "FAITHMON_JUDGE": "offline",
        "FAITHMON_ASSEMBLY_QUIET_SECONDS": "0.2",
        "FAITHMON_DRIFT_DIMENSIONS": "route,model",
        "FAITHMON_DRIFT_BASELINE_DAYS": "0",
        "FAITHMON_WORKER_SCORE_INTERVAL": "0.5",
        # The baseline freezes on the first drift run that has enough records. Mid-load,
        # that is whichever records happen to be scored then, so the workers leave drift
        # to the end, where it runs once over everything, as in the single-process run.
        "FAITHMON_WORKER_DRIFT_INTERVAL": "3600",
        "FAITHMON_WORKER_BATCH": "50",
        "FAITHMON_WORKER_LEASE_SECONDS": "5",
        "FAITHMON_WORKER_HEARTBEAT_FILE": str(run_dir / "worker.heartbeat"),
        "FAITHMON_LOG_LEVEL": "WARNING",
        **extra,
    }


@dataclass(frozen=True)
class DriftState:
    baselines: FrozenBaselines | None
    run: DriftRun
    alerts: list[dict[str, Any]]


def drift_state(settings: Settings, sessions: sessionmaker[Session], now: datetime) -> DriftState:
    """Drift at ``now``: both runs are given one clock, so their alerts compare."""
    judge = wiring.make_judge(settings)
    result = check_drift(sessions, judge.name, wiring.drift_config(settings), now=lambda: now)
    with sessions() as session:
        baselines = store_baselines.load_baselines(session, judge.name)
        alerts = [to_json(a) for a in store_alerts.list_alerts(session, include_resolved=True)]
    for alert in alerts:
        alert.pop("id")
        # The fleet's workers ran the starter sentinel set when they started; the
        # single process did not: the judge's sentinel history is not part of drift.
        alert["details"].pop("sentinel_status", None)
    return DriftState(baselines, result, alerts)


def single_process_run(
    settings: Settings, bodies: Sequence[bytes], traces: int, now: datetime
) -> DriftState:
    """The same traffic through one in-process pipeline, scorer and drift run."""
    with wiring.open_store(settings) as sessions:
        pipeline = wiring.store_pipeline(settings, sessions)
        for n, body in enumerate(bodies, 1):
            spans, rejected = otlp.decode_traces(body)
            assert rejected == 0
            pipeline.submit(spans)
            if n % 100 == 0:
                # Nothing here runs the pipeline's thread: store what it holds before its
                # assembly buffer fills (each body holds whole traces).
                pipeline.flush_all()
        pipeline.flush_all()
        score_pending(sessions, wiring.make_judge(settings), batch=500)
        assert tally(sessions) == Tally(traces, traces, traces, traces, 0, 0)
        return drift_state(settings, sessions, now)


def log_tail(log_dir: Path) -> str:
    parts = []
    for path in sorted(log_dir.glob("*.log")):
        lines = path.read_text(errors="replace").splitlines()[-15:]
        parts.append(f"--- {path.name}\n" + "\n".join(lines))
    return "\n".join(parts)


# --- the scale-out test ----------------------------------------------------------------


@pytest.mark.postgres
@pytest.mark.parametrize(
    ("traces", "baseline"),
    [(1_000, 200), pytest.param(20_000, 1_000, marks=pytest.mark.scale)],
    ids=["1k", "20k"],
)
def test_two_receivers_three_workers_with_restart_and_kill_match_one_process(
    postgres_url: str, pg_engine: Engine, tmp_path: Path, traces: int, baseline: int
) -> None:
    """Every trace stored once and evaluated once through a receiver's and a worker's
    SIGKILL, and drift equal to one process's over the same traffic."""
    traffic = make_traffic(traces, receivers=2)
    assert set(traffic.bodies) == {0, 1}
    env = fleet_env(postgres_url, tmp_path, FAITHMON_DRIFT_BASELINE_RECORDS=str(baseline))
    sessions = store_engine.session_factory(pg_engine)
    fleet = launch.Fleet(
        receivers=2,
        workers=3,
        base_port=free_ports(2),
        env=env,
        run_dir=tmp_path / "run",
        log_dir=tmp_path / "logs",
        stop_timeout=60,
    )
    fleet.start()
    try:
        deadline = time.monotonic() + 900
        senders = [
            Sender(fleet.urls[0], traffic.bodies[0], deadline, len(traffic.bodies[0]) // 3),
            Sender(fleet.urls[1], traffic.bodies[1], deadline),
        ]
        for sender in senders:
            sender.start()

        # One receiver is killed a third of the way through its traffic: SIGKILL, with
        # what it acknowledged still buffered, and a new process takes its port and replays
        # its spool. Its sender goes on meanwhile, sees refused connections and retries;
        # the other receiver's load goes on.
        wait_for(senders[0].paused.is_set, 300, "a third of the load")
        restart: list[int | None] = []
        old = fleet.receiver_members[0].process
        assert old is not None
        restarter = threading.Thread(
            target=lambda: restart.append(fleet.restart_receiver(0, kill=True))
        )
        restarter.start()
        # Resumed once the old process is gone and before the new one is healthy, so
        # the sender meets the restart rather than racing it.
        wait_for(lambda: old.poll() is not None, 60, "receiver 0 to stop", 0.01)
        senders[0].resume.set()
        restarter.join(timeout=120)
        assert restart and restart[0] == -9, f"receiver 0 exited with {restart}"

        # One worker is killed with SIGKILL while it holds leases, halfway through.
        wait_for(lambda: tally(sessions).evaluations >= traces // 4, 600, "evaluations")
        victim = fleet.worker_members[1]
        owner = f"{socket.gethostname()}:{victim.pid}"

        def victim_holds_leases() -> bool:
            with sessions() as session:
                held = session.scalar(
                    select(func.count())
                    .select_from(RecordRow)
                    .where(RecordRow.lease_owner == owner, RecordRow.status == "pending")
                )
            return bool(held)

        wait_for(victim_holds_leases, 30, "the victim worker to hold leases", 0.01)
        assert fleet.kill_worker(1) == -9

        for sender in senders:
            sender.join(timeout=max(1.0, deadline - time.monotonic()))
            assert not sender.is_alive(), "a sender did not finish"
            assert sender.error is None, f"{sender.url}: {sender.error!r}"
        refused = dict(senders[0].retries)

        wait_for(
            lambda: (t := tally(sessions)).records == traces and t.evaluated_records == traces,
            900,
            "every record stored and evaluated",
            0.5,
        )
        assert [m.name for m in fleet.exited()] == ["worker-1"], log_tail(tmp_path / "logs")
    finally:
        statuses = fleet.stop()
        fleet.close_logs()
    assert statuses["serve-0"] in (0, -15) and statuses["serve-1"] in (0, -15), statuses
    assert statuses["worker-0"] == 0 and statuses["worker-2"] == 0, statuses
    assert fleet.receiver_members[0].restarts == 1
    # The restarted receiver's sender had to retry while it was down, so the restart
    # happened under load; what it sent before and after all arrived (below).
    assert refused, "the receiver restarted without its sender noticing"

    # Every trace stored once, every record evaluated once, no lease left behind.
    assert tally(sessions) == Tally(traces, traces, traces, traces, 0, 0)
    with sessions() as session:
        stored = set(session.scalars(select(RecordRow.trace_id)))
        statuses_by = store_records.counts_by_status(session)
    assert stored == set(traffic.trace_ids)
    assert statuses_by == {"scored": traces}, statuses_by  # none cut short as incomplete

    # Drift over the fleet's database equals drift from one process over the same traffic.
    settings = Settings.from_env(env)
    # The traces were made during this test with real timestamps: drift runs just after.
    now = datetime.now(UTC)
    fleet_drift = drift_state(settings, sessions, now)
    # The reference is the single-process topology: one pipeline and one scorer on
    # SQLite, fed the same bodies in the order they were made.
    reference = single_process_run(
        Settings.from_env({**env, "FAITHMON_DATABASE_URL": f"sqlite:///{tmp_path}/one.db"}),
        traffic.all_bodies,
        traces,
        now,
    )
    assert fleet_drift.run.baseline_ready and fleet_drift.baselines
    assert any(a["state"] == "firing" for a in fleet_drift.alerts), fleet_drift.alerts
    assert {tuple(sorted(a["segment"].items())) for a in fleet_drift.alerts} >= {
        (("route", "billing"),)
    }
    assert fleet_drift.baselines == reference.baselines
    assert fleet_drift.run.readings == reference.run.readings
    assert fleet_drift.alerts == reference.alerts


# --- graceful shutdown -----------------------------------------------------------------


def post_all(url: str, bodies: Sequence[bytes]) -> None:
    sender = Sender(url, bodies, time.monotonic() + 60)
    sender.run()
    assert sender.error is None, repr(sender.error)


@pytest.mark.postgres
def test_sigterm_receiver_saves_every_buffered_trace_before_it_exits(
    postgres_url: str, pg_engine: Engine, tmp_path: Path
) -> None:
    """Traces still waiting for assembly (quiet period 600 s) are stored on SIGTERM."""
    traffic = make_traffic(200, receivers=1)
    # A quiet period no run outlasts: whatever is stored was stored by the drain.
    env = fleet_env(postgres_url, tmp_path, FAITHMON_ASSEMBLY_QUIET_SECONDS="600")
    sessions = store_engine.session_factory(pg_engine)
    fleet = launch.Fleet(receivers=1, workers=0, base_port=free_ports(1), env=env)
    fleet.start()
    try:
        # Every trace's quiet period runs from its spans' arrival, after ``posted``:
        # whatever is stored before ``posted + 600`` was stored by the drain.
        posted = time.monotonic()
        post_all(fleet.urls[0], traffic.bodies[0])
        assert tally(sessions).records == 0  # accepted (200), and buffered
        status = fleet.stop_receiver(0)
        assert time.monotonic() - posted < 600, "the quiet period ran out: this proves nothing"
    finally:
        fleet.stop()
    assert status in (0, -15)
    t = tally(sessions)
    assert (t.records, t.distinct_traces) == (200, 200)
    with sessions() as session:
        assert set(session.scalars(select(RecordRow.trace_id))) == set(traffic.trace_ids)
        assert store_records.counts_by_status(session) == {"pending": 200}


@pytest.mark.postgres
def test_sigterm_receiver_answers_503_while_it_drains(
    postgres_url: str, pg_engine: Engine, tmp_path: Path
) -> None:
    """While the drain is held up (the records table locked), requests get 503."""
    traffic = make_traffic(50, receivers=1)
    env = fleet_env(postgres_url, tmp_path, FAITHMON_ASSEMBLY_QUIET_SECONDS="30")
    sessions = store_engine.session_factory(pg_engine)
    fleet = launch.Fleet(receivers=1, workers=0, base_port=free_ports(1), env=env)
    fleet.start()
    answers: list[str] = []
    try:
        url = fleet.urls[0]
        post_all(url, traffic.bodies[0])
        process = fleet.receiver_members[0].process
        assert process is not None
        with pg_engine.connect() as blocker:
            blocker.execute(text("LOCK TABLE records IN EXCLUSIVE MODE"))
            process.terminate()
            wait_for(lambda: waiting_on_a_lock(pg_engine), 30, "the drain to block on the lock")
            assert process.poll() is None, "the receiver exited without saving"
            for path in ("/healthz", "/v1/traces"):
                data = traffic.bodies[0][0] if path == "/v1/traces" else None
                request = urllib.request.Request(url + path, data, PROTOBUF)
                try:
                    with urllib.request.urlopen(request, timeout=3) as response:
                        answers.append(f"{path} {response.status}")
                except urllib.error.HTTPError as exc:
                    answers.append(f"{path} {exc.code}")
                except urllib.error.URLError as exc:
                    answers.append(f"{path} {type(exc.reason).__name__}")
                except OSError as exc:
                    answers.append(f"{path} {type(exc).__name__}")
            blocker.rollback()
        process.wait(timeout=30)
    finally:
        fleet.stop()
    assert tally(sessions).records == 50  # the drain itself works
    assert answers == ["/healthz 503", "/v1/traces 503"], answers


@pytest.fixture
def slow_judge() -> Iterator[tuple[SupportingJudge, str]]:
    server = SupportingJudge(latency=0.25)
    with serve_in_thread(server.app) as url:
        yield server, url + "/v1"


def seed_records(sessions: sessionmaker[Session], count: int) -> None:
    from tests.jobs.factory import records

    with sessions.begin() as session:
        store_records.save_records(session, records(count))


@pytest.mark.postgres
def test_sigterm_worker_mid_batch_exits_promptly_without_leaving_leases(
    postgres_url: str,
    pg_engine: Engine,
    slow_judge: tuple[SupportingJudge, str],
    tmp_path: Path,
) -> None:
    """SIGTERM while a batch is being judged: it finishes or releases it, then exits."""
    _, judge_url = slow_judge
    sessions = store_engine.session_factory(pg_engine)
    seed_records(sessions, 400)  # 400 x 0.25 s / 2 at a time: 50 s to drain the queue
    env = fleet_env(
        postgres_url,
        tmp_path,
        FAITHMON_JUDGE="openai",
        FAITHMON_JUDGE_MODEL="loopback-judge",
        FAITHMON_JUDGE_BASE_URL=judge_url,
        FAITHMON_JUDGE_API_KEY="test-key",
        FAITHMON_JUDGE_CONCURRENCY="2",
        FAITHMON_WORKER_BATCH="10",
        FAITHMON_WORKER_LEASE_SECONDS="300",
    )
    fleet = launch.Fleet(receivers=0, workers=1, base_port=free_ports(1), env=env, stop_timeout=15)
    fleet.start()
    try:
        wait_for(lambda: tally(sessions).evaluations >= 15, 60, "a batch under way", 0.02)
        assert tally(sessions).leased > 0  # mid-batch: it holds leases
        began = time.monotonic()
        status = fleet.stop_worker(0)
        took = time.monotonic() - began
    finally:
        fleet.stop()
    after = tally(sessions)
    # 0, not -9: it exited on its own before the fleet's 15 s stop timeout killed it.
    assert status == 0, f"exit status {status} after {took:.1f}s (-9: killed at the timeout)"
    assert after.leased == 0, after
    assert after.pending > 0  # it stopped, rather than draining the whole queue first
    assert after.evaluations == after.evaluated_records == 400 - after.pending
