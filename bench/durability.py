"""Durability bench: a database outage and a SIGKILL, with and without the receiver's spool.

Run from the repository root::

    python bench/durability.py           # 3,000 traces with a 30 s outage, 5 s of load: ~3 min
    python bench/durability.py --quick   # 1,000 traces with a 10 s outage, 2 s of load: ~70 s
    python bench/durability.py --postgres-url URL  # default: postgres@127.0.0.1:5432/test

Each run gets a fresh PostgreSQL database (``faithmon db upgrade``) and real
``python -m faithmon serve`` processes on 127.0.0.1, with
FAITHMON_ASSEMBLY_QUIET_SECONDS=0.2 and FAITHMON_SPOOL_DIR a fresh folder, or
the empty string for the baseline (no spool), measured in the same run.

1. Outage: the receiver reaches PostgreSQL through a cuttable TCP proxy
   (``tests/e2e/proxy.py``). An app process sends 50 traces/s through the shim
   (``fm.setup``, ``rag_span``, ``record_retrieval``, ``record_answer``) for
   60 s, and the proxy is cut from second 15 to 45. Reported: traces sent,
   stored and lost, the answers the shim's exporter got (counted in the app
   process, during the outage and in all) and the receiver's "answering 503"
   log lines, /healthz mid-outage, and how long after the restore the store
   held every trace the app had sent by then.
2. SIGKILL: two threads POST one trace per request (OTLP protobuf built once by
   the real SDK, a fresh trace id per request) as fast as they can; after 5 s
   the receiver is killed with SIGKILL and restarted on the same spool folder.
   Reported: traces acknowledged (200), stored before and after the restart,
   acknowledged but missing, duplicate rows (rows − distinct trace ids), and the
   time from the restart until the stored count last grew.
3. The receiver's peak RSS (VmHWM) in each run.

Results go to ``bench/results/durability.json``. The script exits 1 when a run
with the spool loses an acknowledged trace or stores one twice, else 0 (also
when PostgreSQL is unreachable: it then prints why and skips).
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import platform
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from common import (
    PROTOBUF,
    RESULTS_DIR,
    SCRUB_KEY,
    cpus,
    postgres_admin,
    postgres_database,
    relative,
)
from ingest import DEFAULT_POSTGRES, Server, free_port, serve
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from sqlalchemy import Engine, create_engine, make_url, text
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.pool import NullPool

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.e2e.proxy import CuttableProxy

RESULTS = RESULTS_DIR / "durability.json"
ANSWER = "Order A17 shipped on 3 March."
QUIET_SECONDS = "0.2"
POLL_SECONDS = 0.25
# The stored count must hold still this long before it counts as final.
STABLE_SECONDS = 5.0
STORE_DEADLINE = 240.0
APP_DEADLINE = 300.0
MAX_ACKNOWLEDGED = 100_000  # the load stops here even if the clock has not run out


@dataclass(frozen=True, slots=True)
class Sizes:
    traces: int
    rate: float  # traces per second from the app
    cut_at: float  # seconds after the app's first trace
    outage: float
    load_seconds: float  # before the SIGKILL


FULL = Sizes(traces=3000, rate=50, cut_at=15, outage=30, load_seconds=5)
QUICK = Sizes(traces=1000, rate=50, cut_at=5, outage=10, load_seconds=2)

# The app: the shim in its own process, paced, counting what its exporter was answered.
APP = """
import json, sys, time
import requests
import faithmon_instrumentation as fm

url, count, rate, out = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
ANSWER = sys.argv[5]
answers = []  # [seconds since the first trace, status or exception name]
send = requests.Session.send
def counted(self, request, **kwargs):  # observe only: every answer the exporter got
    try:
        response = send(self, request, **kwargs)
    except Exception as exc:
        answers.append([time.monotonic() - started, type(exc).__name__])
        raise
    answers.append([time.monotonic() - started, str(response.status_code)])
    return response
requests.Session.send = counted

fm.setup(endpoint=url, service_name="durability-bench")
ids = []
started = time.monotonic()
print("started", flush=True)
for n in range(count):
    time.sleep(max(0.0, started + n / rate - time.monotonic()))
    with fm.rag_span(f"Where is order D{n}?", route="billing") as rag:
        rag.record_retrieval([{"text": ANSWER, "score": 0.5}])
        rag.record_answer(ANSWER, model="m1")
    ids.append(rag.trace_id)
sent_seconds = time.monotonic() - started
flushed = fm.flush(timeout_millis=180_000)
fm.shutdown()
with open(out, "w") as f:
    json.dump({"ids": ids, "flushed": flushed, "answers": answers,
               "send_seconds": sent_seconds, "seconds": time.monotonic() - started}, f)
"""


def server_env(database_url: str, spool_dir: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("FAITHMON_")}
    env.update(
        FAITHMON_DATABASE_URL=database_url,
        FAITHMON_SCRUB_KEY=SCRUB_KEY,
        FAITHMON_ASSEMBLY_QUIET_SECONDS=QUIET_SECONDS,
        FAITHMON_SPOOL_DIR=spool_dir,
        FAITHMON_LOG_LEVEL="INFO",
    )
    return env


def upgrade(database_url: str) -> None:
    env = server_env(database_url, "")
    done = subprocess.run(
        [sys.executable, "-m", "faithmon", "db", "upgrade"],
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    if done.returncode != 0:
        raise RuntimeError(f"faithmon db upgrade failed:\n{done.stdout}{done.stderr}")


def serve_command(port: int) -> list[str]:
    return [sys.executable, "-m", "faithmon", "serve", "--port", str(port), "--grpc-port", "0"]


def counts(engine: Engine) -> tuple[int, int]:
    """(rows, distinct trace ids) in records; (-1, -1) if the database does not answer."""
    try:
        with engine.connect() as connection:
            row = connection.execute(
                text("SELECT count(*), count(DISTINCT trace_id) FROM records")
            ).one()
    except SQLAlchemyError:
        return -1, -1
    return int(row[0]), int(row[1])


def stored_ids(engine: Engine) -> set[str]:
    with engine.connect() as connection:
        return {
            str(i).lower()
            for i in connection.execute(text("SELECT trace_id FROM records")).scalars()
        }


def spool_bytes(folder: Path) -> int:
    try:
        return sum(p.stat().st_size for p in folder.glob("*.spool"))
    except OSError:  # a segment deleted while we looked
        return -1


class Watch:
    """Samples (seconds, stored rows, spool bytes) every POLL_SECONDS in a thread."""

    def __init__(self, engine: Engine, spool: Path | None) -> None:
        self._engine = engine
        self._spool = spool
        self.started = time.perf_counter()
        self.samples: list[tuple[float, int, int]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while True:
            rows = counts(self._engine)[0]
            size = spool_bytes(self._spool) if self._spool else 0
            self.samples.append((time.perf_counter() - self.started, rows, size))
            if self._stop.wait(POLL_SECONDS):
                return

    def now(self) -> float:
        return time.perf_counter() - self.started

    def rows_at(self, seconds: float) -> int:
        before = [rows for t, rows, _ in self.samples if t <= seconds]
        return before[-1] if before else 0

    def last_growth(self) -> float:
        """When the stored count last grew."""
        last, previous = 0.0, None
        for t, rows, _ in self.samples:
            if rows < 0:  # the database did not answer this poll
                continue
            if previous is not None and rows > previous:
                last = t
            previous = rows
        return last

    def wait_stable(self, until: Callable[[int], bool], deadline: float) -> int:
        """Wait until ``until(rows)`` holds, or rows hold still STABLE_SECONDS; returns rows."""
        end = time.monotonic() + deadline
        while time.monotonic() < end:
            time.sleep(POLL_SECONDS)
            if not self.samples:
                continue
            rows = self.samples[-1][1]
            recent = [r for t, r, _ in self.samples if t >= self.now() - STABLE_SECONDS]
            if until(rows) or (self.now() > STABLE_SECONDS and len(set(recent)) == 1):
                return rows
        return self.samples[-1][1]

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()


def log_summary(log: Path) -> dict[str, Any]:
    """Warning and error lines of a server log, digits folded so like lines count together."""
    lines = log.read_text(encoding="utf-8", errors="replace").splitlines()
    kinds = Counter(
        re.sub(r"\d+", "N", line)
        for line in lines
        if "WARNING" in line or "ERROR" in line or "Traceback" in line
    )
    return {
        # "draining ...; answering 503 until saved" at the SIGTERM is not an answer
        "answering_503": sum("faithmon: answering 503:" in line for line in lines),
        "replayed": [line for line in lines if "replayed" in line],
        "warnings": dict(kinds.most_common(12)),
    }


# 1. A database outage, through the shim's own exporter.


def run_outage(admin: Engine, sizes: Sizes, spooled: bool, workdir: Path) -> dict[str, Any]:
    tag = "spool" if spooled else "no-spool"
    spool = workdir / f"outage-{tag}"
    with postgres_database(admin) as url:
        upgrade(url)
        target = make_url(url)
        engine = create_engine(url, poolclass=NullPool)
        with CuttableProxy(target.host or "127.0.0.1", target.port or 5432) as proxy:
            proxied = target.set(port=proxy.port).render_as_string(hide_password=False)
            env = server_env(proxied, str(spool) if spooled else "")
            port = free_port()
            log = workdir / f"outage-{tag}.log"
            with serve(f"faithmon serve (outage, {tag})", serve_command(port), env, port, log) as s:
                result = _drive_outage(s, engine, proxy, sizes, spool if spooled else None, workdir)
                result["peak_rss_mib"] = s.peak_rss_mib()
        rows, distinct = counts(engine)
        ids = stored_ids(engine)
        engine.dispose()
    sent = result.pop("ids")
    lost = [i for i in sent if i not in ids]
    result.update(
        spool=spooled,
        sent=len(sent),
        stored=rows,
        distinct=distinct,
        lost=len(lost),
        lost_ids=lost[:20],
        lost_positions=[sent.index(i) for i in lost[:20]],
        log=log_summary(log),
    )
    return result


def _drive_outage(
    server: Server,
    engine: Engine,
    proxy: CuttableProxy,
    sizes: Sizes,
    spool: Path | None,
    workdir: Path,
) -> dict[str, Any]:
    out = workdir / f"app-{'spool' if spool else 'no-spool'}.json"
    app_log = out.with_suffix(".log")
    url = f"http://127.0.0.1:{server.port}"
    args = [url, str(sizes.traces), str(sizes.rate), str(out), ANSWER]
    with app_log.open("wb") as errors:
        app = subprocess.Popen(
            [sys.executable, "-c", APP, *args], stdout=subprocess.PIPE, stderr=errors
        )
    watch = Watch(engine, spool)
    try:
        assert app.stdout is not None
        if app.stdout.readline().strip() != b"started":
            raise RuntimeError(f"the app did not start:\n{app_log.read_text()}")
        t0 = watch.now()
        time.sleep(max(0.0, t0 + sizes.cut_at - watch.now()))
        proxy.cut()
        cut = watch.now()
        time.sleep(max(0.0, cut + sizes.outage / 2 - watch.now()))
        health = _healthz(server.port)
        time.sleep(max(0.0, cut + sizes.outage - watch.now()))
        proxy.restore()
        restored = watch.now()
        app.wait(timeout=APP_DEADLINE)
        app_done = watch.now()
        report = json.loads(out.read_text(encoding="utf-8"))
        sent = len(report["ids"])
        final = watch.wait_stable(lambda rows: rows >= sent, STORE_DEADLINE)
    finally:
        watch.stop()
        if app.poll() is None:
            app.kill()
            app.wait()
    # The traces the app had sent by the restore, and when the store held as many.
    sent_by_restore = min(sent, int((restored - t0) * sizes.rate) + 1)
    caught_up = next(
        (t - restored for t, rows, _ in watch.samples if t >= restored and rows >= sent_by_restore),
        None,
    )
    last_sent = t0 + report["send_seconds"]
    during = Counter(a for t, a in report["answers"] if cut - t0 <= t < restored - t0)
    app_warnings = [
        line
        for line in app_log.read_text(encoding="utf-8", errors="replace").splitlines()
        if "faithmon_instrumentation" in line
    ]
    return {
        "ids": report["ids"],
        "outage_seconds": restored - cut,
        "stored_at_cut": watch.rows_at(cut),
        "stored_at_restore": watch.rows_at(restored),
        "stored_final": final,
        "healthz_mid_outage": health,
        "peak_spool_bytes": max((b for _, _, b in watch.samples), default=0),
        "exporter_answers": dict(Counter(a for _, a in report["answers"])),
        "exporter_answers_during_outage": dict(during),
        "exporter_answer_times": report["answers"],
        "app_flushed": report["flushed"],
        "app_send_seconds": report["send_seconds"],
        "app_seconds_to_exit": app_done - t0,
        "sent_by_restore": sent_by_restore,
        "caught_up_after_restore_seconds": caught_up,
        "last_stored_after_last_sent_seconds": watch.last_growth() - last_sent,
        "app_warnings": app_warnings[:10],
    }


def _healthz(port: int) -> str:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    try:
        connection.request("GET", "/healthz")
        response = connection.getresponse()
        return f"{response.status} {response.read().decode(errors='replace')}"
    except OSError as exc:
        return type(exc).__name__
    finally:
        connection.close()


# 2. SIGKILL under load.


def template_body() -> tuple[bytes, bytes]:
    """One OpenInference RAG trace (root + retriever) encoded by the real SDK, and its
    trace id's 16 bytes, which each request replaces with a fresh id."""
    memory = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource({"service.name": "durability-bench"}))
    provider.add_span_processor(SimpleSpanProcessor(memory))
    tracer = provider.get_tracer("durability-bench")
    root_attributes = {
        "openinference.span.kind": "CHAIN",
        "input.value": "Where is order A17?",
        "output.value": ANSWER,
    }
    with tracer.start_as_current_span("rag.request", attributes=root_attributes) as root:
        retrieval = {
            "openinference.span.kind": "RETRIEVER",
            "retrieval.documents.0.document.content": ANSWER,
        }
        with tracer.start_as_current_span("rag.retrieve", attributes=retrieval):
            pass
    marker = root.get_span_context().trace_id.to_bytes(16, "big")
    body = encode_spans(memory.get_finished_spans()).SerializeToString()
    provider.shutdown()
    if body.count(marker) != 2:
        raise RuntimeError("the template's trace id is not where expected")
    return body, marker


class Load:
    """Two threads POSTing one trace per request on keep-alive connections until stopped."""

    def __init__(self, port: int) -> None:
        self._port = port
        self._body, self._marker = template_body()
        self.acknowledged: set[str] = set()
        self.answers: Counter[str] = Counter()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._threads = [threading.Thread(target=self._client, daemon=True) for _ in range(2)]
        for thread in self._threads:
            thread.start()

    def _client(self) -> None:
        connection = http.client.HTTPConnection("127.0.0.1", self._port, timeout=30)
        while not self._stop.is_set() and len(self.acknowledged) < MAX_ACKNOWLEDGED:
            trace_id = os.urandom(16)
            body = self._body.replace(self._marker, trace_id)
            try:
                connection.request("POST", "/v1/traces", body, {"Content-Type": PROTOBUF})
                response = connection.getresponse()
                response.read()
                answer = str(response.status)
            except OSError as exc:  # killed mid-request: not acknowledged
                answer = type(exc).__name__
                connection.close()
                connection = http.client.HTTPConnection("127.0.0.1", self._port, timeout=30)
                self._stop.wait(0.01)
            with self._lock:
                self.answers[answer] += 1
                if answer == "200":
                    self.acknowledged.add(trace_id.hex())
        connection.close()

    def stop(self) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join(timeout=60)


def run_kill(admin: Engine, sizes: Sizes, spooled: bool, workdir: Path) -> dict[str, Any]:
    tag = "spool" if spooled else "no-spool"
    spool = workdir / f"kill-{tag}"
    with postgres_database(admin) as url:
        upgrade(url)
        env = server_env(url, str(spool) if spooled else "")
        engine = create_engine(url, poolclass=NullPool)
        port = free_port()
        log = workdir / f"kill-{tag}-1.log"
        with serve(f"faithmon serve (kill, {tag})", serve_command(port), env, port, log) as first:
            load = Load(port)
            started = time.perf_counter()
            while time.perf_counter() - started < sizes.load_seconds and load.answers.total() < (
                MAX_ACKNOWLEDGED
            ):
                time.sleep(0.05)
            first_rss = first.peak_rss_mib()
            first.process.send_signal(signal.SIGKILL)
            first.process.wait(timeout=30)
            load_seconds = time.perf_counter() - started
            load.stop()
        before = counts(engine)[0]
        left_in_spool = spool_bytes(spool) if spooled else 0
        port = free_port()
        log2 = workdir / f"kill-{tag}-2.log"
        watch = Watch(engine, spool if spooled else None)
        spawned = watch.now()
        with serve(f"faithmon serve (restart, {tag})", serve_command(port), env, port, log2) as s:
            ready = watch.now()
            acknowledged = len(load.acknowledged)
            watch.wait_stable(lambda rows: False, STORE_DEADLINE)
            second_rss = s.peak_rss_mib()
        watch.stop()
        rows, distinct = counts(engine)
        ids = stored_ids(engine)
        engine.dispose()
    missing = sorted(load.acknowledged - ids)
    last = watch.last_growth()
    return {
        "spool": spooled,
        "load_seconds": load_seconds,
        "answers": dict(load.answers),
        "acknowledged": acknowledged,
        "acknowledged_per_second": acknowledged / load_seconds,
        "stored_before_restart": before,
        "spool_bytes_at_restart": left_in_spool,
        "stored_after_restart": rows,
        "acknowledged_missing": len(missing),
        "missing_ids": missing[:20],
        "stored_not_acknowledged": len(ids - load.acknowledged),
        "duplicates": rows - distinct,
        "restart_to_ready_seconds": ready - spawned,
        "restart_to_replayed_seconds": max(last, ready) - spawned if rows > before else None,
        "peak_rss_mib": first_rss,
        "restarted_peak_rss_mib": second_rss,
        "log": log_summary(log),
        "restart_log": log_summary(log2),
    }


# The table.


def _n(value: Any) -> str:
    if value is None:
        return "–"
    if isinstance(value, float):
        return f"{value:,.1f}"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


def _answers(answers: dict[str, int]) -> str:
    return " ".join(f"{k}×{v:,}" for k, v in sorted(answers.items())) or "none"


def rows_of(outage: Sequence[dict[str, Any]], kill: Sequence[dict[str, Any]]) -> list[list[str]]:
    def row(
        name: str, cells: Sequence[dict[str, Any]], get: Callable[[dict[str, Any]], Any]
    ) -> list[str]:
        return [name, *(_n(get(cell)) for cell in cells)]

    return [
        ["database outage", "", ""],
        row("  traces sent by the app", outage, lambda r: r["sent"]),
        row("  stored", outage, lambda r: r["stored"]),
        row("  lost", outage, lambda r: r["lost"]),
        row(
            "  exporter got, during the outage",
            outage,
            lambda r: _answers(r["exporter_answers_during_outage"]),
        ),
        row("  exporter got, in all", outage, lambda r: _answers(r["exporter_answers"])),
        row("  receiver logged 'answering 503'", outage, lambda r: r["log"]["answering_503"]),
        row("  /healthz mid-outage", outage, lambda r: r["healthz_mid_outage"].split()[0]),
        row(
            "  stored during the outage",
            outage,
            lambda r: r["stored_at_restore"] - r["stored_at_cut"],
        ),
        row(
            "  traces sent by the restore all stored, s after it",
            outage,
            lambda r: r["caught_up_after_restore_seconds"],
        ),
        row(
            "  last record stored, s after the last trace sent",
            outage,
            lambda r: r["last_stored_after_last_sent_seconds"],
        ),
        row("  peak spool, MB", outage, lambda r: r["peak_spool_bytes"] / 1e6),
        row("  receiver peak RSS, MiB", outage, lambda r: r["peak_rss_mib"]),
        ["SIGKILL under load", "", ""],
        row("  acknowledged (200)", kill, lambda r: r["acknowledged"]),
        row("  acknowledged per second", kill, lambda r: r["acknowledged_per_second"]),
        row("  stored before restart", kill, lambda r: r["stored_before_restart"]),
        row("  stored after restart", kill, lambda r: r["stored_after_restart"]),
        row("  acknowledged but missing", kill, lambda r: r["acknowledged_missing"]),
        row("  stored, never acknowledged", kill, lambda r: r["stored_not_acknowledged"]),
        row("  duplicate rows", kill, lambda r: r["duplicates"]),
        row("  restart to ready, s", kill, lambda r: r["restart_to_ready_seconds"]),
        row("  restart to replayed, s", kill, lambda r: r["restart_to_replayed_seconds"]),
        row("  receiver peak RSS before kill, MiB", kill, lambda r: r["peak_rss_mib"]),
        row("  restarted receiver peak RSS, MiB", kill, lambda r: r["restarted_peak_rss_mib"]),
    ]


def render_table(rows: Sequence[Sequence[str]], header: str, notes: Sequence[str]) -> str:
    titles = ("figure", "spool on", "spool off (baseline)")
    widths = [max(len(t), *(len(r[i]) for r in rows)) for i, t in enumerate(titles)]

    def line(cells: Sequence[str]) -> str:
        padded = [
            c.ljust(w) if i == 0 else c.rjust(w)
            for i, (c, w) in enumerate(zip(cells, widths, strict=True))
        ]
        return "  ".join(padded).rstrip()

    out = [header, "", line(titles), line(["-" * w for w in widths])]
    out += [line(r) for r in rows]
    return "\n".join([*out, "", *notes])


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument(
        "--quick", action="store_true", help="1,000 traces, a 10 s outage, 2 s of load"
    )
    parser.add_argument(
        "--postgres-url",
        default=DEFAULT_POSTGRES,
        help=f"database to create the bench databases from (default {DEFAULT_POSTGRES})",
    )
    args = parser.parse_args(argv)
    sizes = QUICK if args.quick else FULL
    mode = "quick" if args.quick else "full"
    admin, reason = postgres_admin(args.postgres_url)
    if admin is None:
        print(f"PostgreSQL unreachable, durability bench skipped: {reason}")
        return 0
    workdir = Path(tempfile.mkdtemp(prefix="faithmon-durability-bench-"))
    started = time.perf_counter()
    outage: list[dict[str, Any]] = []
    kill: list[dict[str, Any]] = []
    try:
        for spooled in (True, False):
            label = "spool on" if spooled else "spool off"
            print(
                f"outage, {label}: {sizes.traces:,} traces, {sizes.outage:.0f} s cut",
                file=sys.stderr,
            )
            outage.append(run_outage(admin, sizes, spooled, workdir))
            print(f"  sent {outage[-1]['sent']}, stored {outage[-1]['stored']}", file=sys.stderr)
        for spooled in (True, False):
            label = "spool on" if spooled else "spool off"
            print(f"SIGKILL, {label}: {sizes.load_seconds:.0f} s of load", file=sys.stderr)
            kill.append(run_kill(admin, sizes, spooled, workdir))
            print(
                f"  acknowledged {kill[-1]['acknowledged']}, "
                f"missing {kill[-1]['acknowledged_missing']}",
                file=sys.stderr,
            )
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
        admin.dispose()
    elapsed = time.perf_counter() - started

    spooled_outage, spooled_kill = outage[0], kill[0]
    bug = bool(
        spooled_outage["lost"]
        or spooled_outage["stored"] != spooled_outage["distinct"]
        or spooled_kill["acknowledged_missing"]
        or spooled_kill["duplicates"]
    )
    notes = [
        f"outage: the app sends {sizes.rate:.0f} traces/s through the shim; PostgreSQL is cut "
        f"from {sizes.cut_at:.0f} s to {sizes.cut_at + sizes.outage:.0f} s (proxy)",
        "SIGKILL: 2 threads, one trace per POST, as fast as answered; then a restart on the "
        "same spool folder; 'replayed' = until the stored count last grew",
        f"with the spool, lost or duplicated: {'YES (a bug)' if bug else 'none'}",
    ]
    for run in (*outage, *kill):
        for key in ("log", "restart_log"):
            if key in run and run[key]["replayed"]:
                notes.append(f"  {run[key]['replayed'][-1].strip()}")
    header = (
        f"faithmon durability bench ({mode}): Python {platform.python_version()}, "
        f"{cpus()} CPUs, PostgreSQL, {elapsed:.0f}s in all"
    )
    print(render_table(rows_of(outage, kill), header, notes))

    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    report = {
        "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "mode": mode,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpus": cpus(),
        "seconds": elapsed,
        "sizes": {
            "traces": sizes.traces,
            "rate": sizes.rate,
            "cut_at": sizes.cut_at,
            "outage": sizes.outage,
            "load_seconds": sizes.load_seconds,
        },
        "assembly_quiet_seconds": float(QUIET_SECONDS),
        "spool_lost_or_duplicated": bug,
        "outage": outage,
        "sigkill": kill,
    }
    RESULTS.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"\nwrote {relative(RESULTS)}")
    return 1 if bug else 0


if __name__ == "__main__":
    sys.exit(main())
