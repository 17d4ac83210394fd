"""Ingest benchmark: OTLP protobuf requests into a real ``faithmon serve``, until stored.

Run from the repository root::

    python bench/ingest.py                     # 30 requests (3,000 traces) per run
    python bench/ingest.py --quick             # 5 requests (500 traces) per run
    python bench/ingest.py --postgres-url ''   # skip PostgreSQL

Each trace is written by the shim (``rag_span``, ``record_retrieval`` of 10
chunks of about 1 KB, ``record_answer``: three spans). The chunk texts are
generated, so no two traces repeat one, and about a third of them hold an
e-mail address or a phone number for the scrubber to replace. The traces are
encoded before timing into ExportTraceServiceRequest bodies of 100 traces.

Figures (see bench/README.md), each run against a fresh database and a fresh
server process:

1. traces/s from the first POST until ``SELECT count(*) FROM records`` reaches
   the number of traces, with ``faithmon serve`` on SQLite and on PostgreSQL,
   against the same bodies POSTed to a bare Starlette app under uvicorn in its
   own process (the HTTP cost);
2. the serve process's peak RSS (VmHWM), against the bare server's;
3. when arize-phoenix is installed (``--phoenix``, or /tmp/phoenix-venv/bin/phoenix),
   faithmon on SQLite against ``phoenix serve`` on SQLite, stored spans counted
   in its ``spans`` table, and their peak RSS.

Traffic goes to 127.0.0.1 only. Results are also written to
``bench/results/ingest.json``.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import platform
import random
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path

from common import (
    PROTOBUF,
    RESULTS_DIR,
    SCRUB_KEY,
    Figure,
    by_trace,
    cpus,
    encode_bodies,
    number,
    postgres_admin,
    postgres_database,
    relative,
    render,
)
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from sqlalchemy import Engine, create_engine, text
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.pool import NullPool

import faithmon_instrumentation as fm

RESULTS = RESULTS_DIR / "ingest.json"
SERVICE = "northwind-help"
SEED = 11
TRACES_PER_REQUEST = 100
SPANS_PER_TRACE = 3
CHUNKS = 10
CHUNK_BYTES = 1024
# Share of chunks that hold an e-mail address or a phone number.
PII_SHARE = 0.3
QUIET_SECONDS = "0.2"
DEFAULT_POSTGRES = "postgresql+psycopg://postgres@127.0.0.1:5432/test"
DEFAULT_PHOENIX = Path("/tmp/phoenix-venv/bin/phoenix")
# Seconds to wait, after the last POST, for every record to be stored.
STORE_DEADLINE = 300.0
START_DEADLINE = 120.0
POLL_SECONDS = 0.02
# Retry-After when a 503 does not say (Phoenix's does not).
DEFAULT_RETRY_AFTER = 1.0


@dataclass(frozen=True, slots=True)
class Sizes:
    requests: int
    repetitions: int
    # Phoenix ingests far slower and takes ~10 s to start: fewer runs keep the time down.
    phoenix_repetitions: int


QUICK = Sizes(requests=5, repetitions=1, phoenix_repetitions=1)
FULL = Sizes(requests=30, repetitions=3, phoenix_repetitions=1)


# Payloads: varied help-centre text, written by the shim.

_FIRST = "anna ben chloe david emma felix grace hugo iris jonas karen liam mia noah".split()
_LAST = "schmidt martin rossi novak jansen silva keller dubois berg costa weber ward".split()
_DOMAINS = ("northwind.example", "acme.example", "mail.example.org", "globex.example.com")
_CITIES = "Lisbon Hamburg Lyon Turin Gdansk Utrecht Leeds Porto Graz Malmo Bilbao Cork".split()
_PRODUCTS = (
    "standing desk",
    "noise-cancelling headset",
    "espresso grinder",
    "trail backpack",
    "USB-C dock",
    "linen duvet cover",
    "cast-iron skillet",
    "e-reader",
    "office chair",
    "rain jacket",
)
_SECTIONS = ("billing", "shipping", "returns", "account", "warranty")
_TENANTS = ("acme", "globex", "initech", "umbrella", "hooli")
_MODELS = ("northwind-llm-1.0", "northwind-llm-1.1")

_SENTENCES: dict[str, tuple[str, ...]] = {
    "billing": (
        "Invoices for order {order} are issued on the {day} business day of the month.",
        "The Team plan costs {amount} euros per user per month, billed in {city}.",
        "Annual billing saves {percent} percent against paying month by month.",
        "Failed card payments are retried after {days} days, then the account is paused.",
        "A refund of {amount} euros reaches the original payment method within {days} days.",
        "VAT is shown on every invoice; customers in {city} see it in local currency.",
        "Credit notes for the {product} are listed on the Billing page under Adjustments.",
    ),
    "shipping": (
        "Standard shipping to {city} takes {days} to {days2} business days.",
        "Express orders placed before {hour}:00 leave the warehouse the same day.",
        "Every parcel gets a tracking number once it leaves the {city} warehouse.",
        "Orders over {amount} euros ship for free; smaller ones pay a flat fee.",
        "Bulky items such as the {product} travel by freight and need a delivery slot.",
        "Tracking updates for order {order} appear within {hours} hours of dispatch.",
        "Parcels that cannot be delivered wait {days} days at the local depot in {city}.",
    ),
    "returns": (
        "Items can be returned within {days} days of delivery if unused.",
        "Return labels are free for customers in {city} and most of the EU.",
        "The warehouse inspects returned items within {days} business days.",
        "Refunds for the {product} are issued once inspection is complete.",
        "Sale items can be exchanged but not refunded; gift cards cannot be returned.",
        "Return order {order} by dropping the parcel at any post office.",
        "A restocking fee of {percent} percent applies to opened electronics.",
    ),
    "account": (
        "Two-factor authentication can be turned on from the Security tab.",
        "Team owners can invite up to {count} members on the Team plan.",
        "Password reset links expire after {hours} hours for your safety.",
        "Accounts inactive for {days} months are archived but not deleted.",
        "The audit log keeps {count} days of sign-in history for each workspace.",
        "Single sign-on is available for workspaces based in {city} and elsewhere.",
    ),
    "warranty": (
        "The {product} carries a {count}-month warranty from the delivery date.",
        "Warranty claims need the order number, such as {order}, and a photo.",
        "Repairs are handled by our service partner in {city} within {days} days.",
        "Accidental damage to the {product} is not covered by the standard warranty.",
        "Extended cover adds {count} months for {amount} euros.",
    ),
}

_QUESTIONS = (
    "How long does a refund for order {order} take?",
    "When will my {product} arrive in {city}?",
    "Can I return the {product} after {days} days?",
    "Why was my card charged {amount} euros twice?",
    "How do I add {count} people to my team?",
    "Is the {product} still under warranty?",
    "Where is my parcel for order {order}?",
    "What does express shipping to {city} cost?",
)


def _fill(template: str, rng: random.Random) -> str:
    days = rng.randint(2, 30)
    return template.format(
        order=f"NW-{rng.randint(100000, 999999)}",
        day=rng.choice(("first", "second", "third", "last")),
        amount=f"{rng.randint(5, 900)}.{rng.randint(0, 99):02d}",
        percent=rng.randint(5, 25),
        days=days,
        days2=days + rng.randint(1, 4),
        hours=rng.randint(2, 72),
        hour=rng.randint(10, 16),
        count=rng.randint(3, 50),
        city=rng.choice(_CITIES),
        product=rng.choice(_PRODUCTS),
    )


def _email(rng: random.Random) -> str:
    return f"{rng.choice(_FIRST)}.{rng.choice(_LAST)}{rng.randint(1, 99)}@{rng.choice(_DOMAINS)}"


def _phone(rng: random.Random) -> str:
    return rng.choice(
        (
            f"+44 20 7946 0{rng.randint(100, 999)}",
            f"(415) 555-01{rng.randint(10, 99)}",
            f"+1 646 555 {rng.randint(1000, 9999)}",
            f"+33 1 42 68 {rng.randint(10, 99)} {rng.randint(10, 99)}",
        )
    )


_CONTACT_EMAIL = "Questions about this go to"
_CONTACT_PHONE = "For urgent cases call"


def _contact(rng: random.Random) -> str:
    if rng.random() < 0.5:
        return f"{_CONTACT_EMAIL} {_email(rng)}, answered within one business day."
    return f"{_CONTACT_PHONE} {_phone(rng)} between 8:00 and 18:00 on weekdays."


def _chunk_text(section: str, rng: random.Random) -> str:
    sentences = [_fill(rng.choice(_SENTENCES[section]), rng) for _ in range(3)]
    if rng.random() < PII_SHARE:
        sentences.insert(rng.randint(0, len(sentences)), _contact(rng))
    body = " ".join(sentences)
    while len(body) < CHUNK_BYTES - 60:
        other = rng.choice(_SECTIONS)
        body += " " + _fill(rng.choice(_SENTENCES[other]), rng)
    return body


@dataclass(frozen=True, slots=True)
class Trace:
    question: str
    route: str
    tenant: str
    chunks: list[dict[str, object]]
    answer: str
    model: str


def _trace(rng: random.Random) -> Trace:
    route = rng.choice(_SECTIONS)
    question = _fill(rng.choice(_QUESTIONS), rng)
    if rng.random() < 0.1:
        question += f" My e-mail is {_email(rng)}."
    chunks: list[dict[str, object]] = [
        {
            "id": f"kb-{route}-{rng.randint(1, 5000)}",
            "text": _chunk_text(route if i < 6 else rng.choice(_SECTIONS), rng),
            "score": round(0.95 - i * 0.05 - rng.random() * 0.02, 4),
            "metadata": {"source": f"help-centre/{route}", "updated": f"2026-{i % 12 + 1:02d}"},
        }
        for i in range(CHUNKS)
    ]
    top = str(chunks[0]["text"]).split(". ")
    answer = ". ".join(top[: rng.randint(1, 3)]).rstrip(".") + "."
    return Trace(question, route, rng.choice(_TENANTS), chunks, answer, rng.choice(_MODELS))


@dataclass(frozen=True, slots=True)
class Payload:
    bodies: list[bytes]
    traces: int
    spans: int
    chunk_bytes: float
    pii_chunks: int

    @property
    def body_bytes(self) -> int:
        return sum(len(b) for b in self.bodies)


def make_payload(requests: int) -> Payload:
    """``requests`` OTLP bodies of TRACES_PER_REQUEST shim traces each."""
    rng = random.Random(SEED)
    traces = [_trace(rng) for _ in range(requests * TRACES_PER_REQUEST)]
    exporter = InMemorySpanExporter()
    fm.setup(service_name=SERVICE, processors=[SimpleSpanProcessor(exporter)], export=False)
    try:
        for t in traces:
            with fm.rag_span(t.question, route=t.route, tenant=t.tenant) as rag:
                rag.record_retrieval(t.chunks, retriever="bench-kb", retriever_version="v3")
                rag.record_answer(t.answer, model=t.model, temperature=0.2)
    finally:
        fm.shutdown()
    spans = exporter.get_finished_spans()
    grouped = by_trace(spans)
    if len(grouped) != len(traces) or len(spans) != len(traces) * SPANS_PER_TRACE:
        raise RuntimeError(
            f"expected {len(traces)} traces, got {len(grouped)} ({len(spans)} spans)"
        )
    texts = [str(c["text"]) for t in traces for c in t.chunks]
    return Payload(
        bodies=encode_bodies(grouped, TRACES_PER_REQUEST),
        traces=len(traces),
        spans=len(spans),
        chunk_bytes=statistics.mean(len(s.encode()) for s in texts),
        pii_chunks=sum(_CONTACT_EMAIL in s or _CONTACT_PHONE in s for s in texts),
    )


# Servers: separate processes on 127.0.0.1, started and stopped by pid.


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _status(port: int, path: str) -> int | None:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
    try:
        connection.request("GET", path)
        response = connection.getresponse()
        response.read()
        return response.status
    except OSError:
        return None
    finally:
        connection.close()


@dataclass(slots=True)
class Server:
    """A server process: its pid, port and log, and its peak RSS once measured."""

    name: str
    process: subprocess.Popen[bytes]
    port: int
    log: Path

    def alive(self) -> bool:
        return self.process.poll() is None

    def log_tail(self, lines: int = 30) -> str:
        try:
            content = self.log.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return ""
        return "\n".join(content.splitlines()[-lines:])

    def peak_rss_mib(self) -> float:
        """VmHWM of the process, in MiB (Linux)."""
        status = Path(f"/proc/{self.process.pid}/status").read_text(encoding="utf-8")
        for line in status.splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
        raise RuntimeError(f"no VmHWM in /proc/{self.process.pid}/status")

    def fail(self, message: str) -> RuntimeError:
        return RuntimeError(f"{self.name}: {message}\n--- log tail ---\n{self.log_tail()}")


@contextmanager
def serve(
    name: str,
    command: Sequence[str],
    env: Mapping[str, str],
    port: int,
    log: Path,
    ready_path: str = "/healthz",
    cwd: Path | None = None,
) -> Iterator[Server]:
    """Start ``command``, wait until GET ``ready_path`` answers 200, stop it by its pid."""
    with log.open("wb") as out:
        process = subprocess.Popen(
            list(command), env=dict(env), stdout=out, stderr=subprocess.STDOUT, cwd=cwd
        )
    server = Server(name, process, port, log)
    try:
        deadline = time.monotonic() + START_DEADLINE
        while _status(port, ready_path) != 200:
            if not server.alive():
                raise server.fail(f"exited with {process.returncode} before it was ready")
            if time.monotonic() > deadline:
                raise server.fail(f"not ready after {START_DEADLINE:.0f}s")
            time.sleep(0.05)
        yield server
    finally:
        if server.alive():
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


@dataclass(slots=True)
class Posted:
    seconds: float
    retries_503: int = 0


def post_all(port: int, bodies: Sequence[bytes]) -> Posted:
    """POST every body on one keep-alive connection; waits and retries on 503 + Retry-After."""
    retries = 0
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    started = time.perf_counter()
    try:
        for body in bodies:
            while True:
                connection.request(
                    "POST", "/v1/traces", body=body, headers={"Content-Type": PROTOBUF}
                )
                response = connection.getresponse()
                response.read()
                if response.status == 200:
                    break
                if response.status != 503:
                    raise RuntimeError(f"POST /v1/traces answered {response.status}")
                retries += 1
                retry_after = response.getheader("Retry-After")
                try:
                    time.sleep(float(retry_after) if retry_after else DEFAULT_RETRY_AFTER)
                except ValueError:  # an HTTP date: not sent by these servers
                    time.sleep(DEFAULT_RETRY_AFTER)
                # Retry-After outlasts the server's keep-alive: its idle close is expected.
                connection.close()
                connection = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
        return Posted(time.perf_counter() - started, retries)
    finally:
        connection.close()


def _count(engine: Engine, table: str) -> int:
    try:
        with engine.connect() as connection:
            return int(connection.execute(text(f"SELECT count(*) FROM {table}")).scalar_one())
    except SQLAlchemyError:
        return -1  # not created yet, or locked for a moment


def wait_stored(server: Server, engine: Engine, table: str, expected: int) -> float:
    """Poll until ``table`` holds ``expected`` rows; returns ``time.perf_counter()`` then."""
    deadline = time.monotonic() + STORE_DEADLINE
    while True:
        count = _count(engine, table)
        if count >= expected:
            if count > expected:
                raise server.fail(f"{table} holds {count} rows, expected {expected}")
            return time.perf_counter()
        if not server.alive():
            raise server.fail(f"exited with {server.process.returncode}; {count} {table} stored")
        if time.monotonic() > deadline:
            raise server.fail(f"{count} of {expected} {table} stored after {STORE_DEADLINE:.0f}s")
        time.sleep(POLL_SECONDS)


@dataclass(frozen=True, slots=True)
class Run:
    """One measured run: end-to-end seconds, POST seconds, peak RSS, 503s seen."""

    seconds: float
    post_seconds: float
    peak_rss_mib: float
    retries_503: int
    # faithmon only: records stored with a status other than pending (evicted, say).
    not_pending: int = 0

    def as_json(self) -> dict[str, float]:
        return {
            "seconds": self.seconds,
            "post_seconds": self.post_seconds,
            "peak_rss_mib": self.peak_rss_mib,
            "retries_503": self.retries_503,
            "not_pending": self.not_pending,
        }


def _measure(server: Server, payload: Payload, engine: Engine | None, table: str) -> Run:
    """POST the payload; the clock stops when ``table`` holds every item (or at the last 200)."""
    started = time.perf_counter()
    posted = post_all(server.port, payload.bodies)
    if engine is None:
        seconds = posted.seconds
    else:
        expected = payload.traces if table == "records" else payload.spans
        seconds = wait_stored(server, engine, table, expected) - started
    return Run(seconds, posted.seconds, server.peak_rss_mib(), posted.retries_503)


def _clean_env(**extra: str) -> dict[str, str]:
    """This process's environment without FAITHMON_* and PHOENIX_*, plus ``extra``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("FAITHMON_", "PHOENIX_"))}
    env.update(extra)
    return env


def run_faithmon(payload: Payload, database_url: str, workdir: Path, tag: str) -> Run:
    env = _clean_env(
        FAITHMON_DATABASE_URL=database_url,
        FAITHMON_SCRUB_KEY=SCRUB_KEY,
        FAITHMON_ASSEMBLY_QUIET_SECONDS=QUIET_SECONDS,
        FAITHMON_LOG_LEVEL="WARNING",
    )
    faithmon = [sys.executable, "-m", "faithmon"]
    upgrade = subprocess.run(
        [*faithmon, "db", "upgrade"], env=env, capture_output=True, text=True, check=False
    )
    if upgrade.returncode != 0:
        raise RuntimeError(f"faithmon db upgrade failed:\n{upgrade.stdout}{upgrade.stderr}")
    port = free_port()
    command = [*faithmon, "serve", "--port", str(port), "--grpc-port", "0"]
    engine = create_engine(database_url, poolclass=NullPool)
    try:
        with serve(f"faithmon serve ({tag})", command, env, port, workdir / f"{tag}.log") as server:
            run = _measure(server, payload, engine, "records")
        # Every trace is whole, so every record should wait for the judge; an evicted
        # trace (too many in flight) would be stored as incomplete_evidence instead.
        with engine.connect() as connection:
            query = "SELECT count(*) FROM records WHERE status <> 'pending'"
            not_pending = int(connection.execute(text(query)).scalar_one())
        return replace(run, not_pending=not_pending)
    finally:
        engine.dispose()


BARE_SERVER = """
import sys

import uvicorn
from starlette.applications import Starlette
from starlette.responses import Response
from starlette.routing import Route


async def accept(request):
    await request.body()
    return Response(b"", media_type="application/x-protobuf")


async def healthz(request):
    return Response(b"ok")


app = Starlette(
    routes=[Route("/v1/traces", accept, methods=["POST"]), Route("/healthz", healthz)]
)
uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), log_level="warning")
"""


def run_bare(payload: Payload, workdir: Path) -> Run:
    """The baseline: a Starlette app under uvicorn, in its own process, that reads and answers."""
    port = free_port()
    env = _clean_env()
    command = [sys.executable, "-c", BARE_SERVER, str(port)]
    with serve("bare Starlette", command, env, port, workdir / "bare.log") as server:
        return _measure(server, payload, None, "")


def run_phoenix(payload: Payload, phoenix: Path, workdir: Path, tag: str) -> Run:
    home = workdir / tag
    home.mkdir()
    port = free_port()
    env = _clean_env(
        PHOENIX_WORKING_DIR=str(home),
        PHOENIX_HOST="127.0.0.1",
        PHOENIX_PORT=str(port),
        PHOENIX_GRPC_PORT=str(free_port()),
        PHOENIX_TELEMETRY_ENABLED="false",
        PHOENIX_LOGGING_LEVEL="warning",
        PHOENIX_DB_LOGGING_LEVEL="warning",
    )
    engine = create_engine(f"sqlite:///{home / 'phoenix.db'}", poolclass=NullPool)
    try:
        with serve(
            f"phoenix serve ({tag})",
            [str(phoenix), "serve"],
            env,
            port,
            home / "serve.log",
            cwd=home,
        ) as server:
            return _measure(server, payload, engine, "spans")
    finally:
        engine.dispose()


# The benchmark.


@dataclass(slots=True)
class Results:
    sqlite: list[Run] = field(default_factory=list)
    postgres: list[Run] = field(default_factory=list)
    bare: list[Run] = field(default_factory=list)
    phoenix: list[Run] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def _rates(runs: Sequence[Run], items: int) -> tuple[float, ...]:
    return tuple(items / r.seconds for r in runs)


def _accepted(runs: Sequence[Run], items: int) -> tuple[float, ...]:
    return tuple(items / r.post_seconds for r in runs)


def _rss(runs: Sequence[Run]) -> tuple[float, ...]:
    return tuple(r.peak_rss_mib for r in runs)


def figures(results: Results, payload: Payload) -> list[Figure]:
    traces = payload.traces
    bare = "same bodies → bare Starlette 200 (own process)"
    out = [
        Figure(
            "faithmon serve → SQLite, POST to stored",
            "traces/s",
            _rates(results.sqlite, traces),
            bare,
            _rates(results.bare, traces),
            higher_is_better=True,
        )
    ]
    out.append(
        Figure(
            "faithmon serve → SQLite, POSTs answered",
            "traces/s",
            _accepted(results.sqlite, traces),
            bare,
            _rates(results.bare, traces),
            higher_is_better=True,
        )
    )
    if results.postgres:
        out.append(
            Figure(
                "faithmon serve → PostgreSQL, POST to stored",
                "traces/s",
                _rates(results.postgres, traces),
                bare,
                _rates(results.bare, traces),
                higher_is_better=True,
            )
        )
    if results.phoenix:
        out.append(
            Figure(
                "faithmon serve → SQLite, POST to stored",
                "traces/s",
                _rates(results.sqlite, traces),
                "phoenix serve → SQLite, POST to stored",
                _rates(results.phoenix, traces),
                higher_is_better=True,
            )
        )
    bare_rss = "bare Starlette server, peak RSS"
    out.append(
        Figure(
            "faithmon serve (SQLite), peak RSS",
            "MiB",
            _rss(results.sqlite),
            bare_rss,
            _rss(results.bare),
            higher_is_better=False,
            peak=True,
        )
    )
    if results.postgres:
        out.append(
            Figure(
                "faithmon serve (PostgreSQL), peak RSS",
                "MiB",
                _rss(results.postgres),
                bare_rss,
                _rss(results.bare),
                higher_is_better=False,
                peak=True,
            )
        )
    if results.phoenix:
        out.append(
            Figure(
                "faithmon serve (SQLite), peak RSS",
                "MiB",
                _rss(results.sqlite),
                "phoenix serve (SQLite), peak RSS",
                _rss(results.phoenix),
                higher_is_better=False,
                peak=True,
            )
        )
    return out


def _phoenix_path(option: str | None) -> tuple[Path | None, str]:
    if option == "":
        return None, "--phoenix '' given"
    path = Path(option) if option else DEFAULT_PHOENIX
    if path.is_file() and os.access(path, os.X_OK):
        return path, ""
    if option:
        raise SystemExit(f"--phoenix {option}: not an executable file")
    return None, f"{DEFAULT_PHOENIX} not found (pip install arize-phoenix into /tmp/phoenix-venv)"


def _phoenix_version(phoenix: Path) -> str:
    python = phoenix.parent / "python"
    probe = subprocess.run(
        [str(python), "-c", "import importlib.metadata as m; print(m.version('arize-phoenix'))"],
        capture_output=True,
        text=True,
        check=False,
    )
    return probe.stdout.strip() or "unknown"


def _logged(label: str, run: Run, items: int) -> Run:
    print(
        f"  {label}: {items / run.seconds:,.0f} traces/s ({run.seconds:.2f}s, "
        f"POSTs {run.post_seconds:.2f}s, peak RSS {run.peak_rss_mib:.0f} MiB, "
        f"{run.retries_503} × 503, {run.not_pending} records not pending)",
        file=sys.stderr,
        flush=True,
    )
    return run


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="5 requests per run, one run each")
    parser.add_argument(
        "--postgres-url",
        default=DEFAULT_POSTGRES,
        help=f"SQLAlchemy URL of a database to connect to and create the bench database from "
        f"('' skips PostgreSQL; default {DEFAULT_POSTGRES})",
    )
    parser.add_argument(
        "--phoenix",
        default=None,
        help=f"path of arize-phoenix's `phoenix` command (default: {DEFAULT_PHOENIX} if it "
        "exists; '' skips Phoenix)",
    )
    args = parser.parse_args(argv)
    sizes = QUICK if args.quick else FULL
    mode = "quick" if args.quick else "full"

    started = time.perf_counter()
    payload = make_payload(sizes.requests)
    print(
        f"payload: {len(payload.bodies)} requests of {TRACES_PER_REQUEST} traces "
        f"({payload.spans} spans, {payload.body_bytes / len(payload.bodies) / 1e6:.2f} MB "
        f"per request; chunks of {payload.chunk_bytes:.0f} B on average, "
        f"{payload.pii_chunks} of {payload.traces * CHUNKS} with an e-mail or phone number), "
        f"built in {time.perf_counter() - started:.1f}s",
        file=sys.stderr,
    )

    results = Results()
    admin, postgres_skip = postgres_admin(args.postgres_url)
    if admin is None:
        results.notes.append(f"PostgreSQL skipped: {postgres_skip}")
        print(results.notes[-1], file=sys.stderr)
    phoenix, phoenix_skip = _phoenix_path(args.phoenix)
    phoenix_version = _phoenix_version(phoenix) if phoenix else None
    if phoenix is None:
        results.notes.append(f"Phoenix skipped: {phoenix_skip}")
        print(results.notes[-1], file=sys.stderr)

    workdir = Path(tempfile.mkdtemp(prefix="faithmon-ingest-bench-"))
    try:
        for repetition in range(1, sizes.repetitions + 1):
            print(f"repetition {repetition} of {sizes.repetitions}", file=sys.stderr)
            traces = payload.traces
            tag = f"sqlite-{repetition}"
            run = run_faithmon(payload, f"sqlite:///{workdir / (tag + '.db')}", workdir, tag)
            results.sqlite.append(_logged("faithmon → SQLite", run, traces))
            results.bare.append(_logged("bare Starlette", run_bare(payload, workdir), traces))
            if admin is not None:
                with postgres_database(admin) as url:
                    run = run_faithmon(payload, url, workdir, f"postgres-{repetition}")
                results.postgres.append(_logged("faithmon → PostgreSQL", run, traces))
            if phoenix is not None and repetition <= sizes.phoenix_repetitions:
                run = run_phoenix(payload, phoenix, workdir, f"phoenix-{repetition}")
                results.phoenix.append(_logged(f"phoenix {phoenix_version} → SQLite", run, traces))
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
        if admin is not None:
            admin.dispose()
    elapsed = time.perf_counter() - started

    table = figures(results, payload)
    not_pending = sum(r.not_pending for r in (*results.sqlite, *results.postgres))
    retries = {
        name: sum(r.retries_503 for r in runs)
        for name, runs in (
            ("faithmon_sqlite", results.sqlite),
            ("faithmon_postgres", results.postgres),
            ("bare", results.bare),
            ("phoenix", results.phoenix),
        )
    }
    sqlite_rate = table[0].value
    notes = [
        "ratio = value / baseline value (traces/s: below 1 is slower; MiB: above 1 uses more)",
        f"traces/s: median of {sizes.repetitions} runs (Phoenix: {len(results.phoenix)}); "
        "peak RSS: largest VmHWM of the runs; each run a fresh server process and database",
        f"goal ≥ 1,000 traces/s on SQLite: {'met' if sqlite_rate >= 1000 else 'MISSED'} "
        f"({number(sqlite_rate)} traces/s)",
        "503 answers retried: " + ", ".join(f"{k} {v}" for k, v in retries.items()),
        f"records stored not pending (evicted or incomplete; should be 0): {not_pending}",
        *results.notes,
    ]
    if phoenix_version:
        notes.append(f"Phoenix: arize-phoenix {phoenix_version} ({phoenix})")
    header = (
        f"faithmon ingest bench ({mode}): Python {platform.python_version()} on "
        f"{platform.machine()}, {cpus()} CPUs, {payload.traces:,} traces in "
        f"{len(payload.bodies)} requests of {TRACES_PER_REQUEST} per run, {elapsed:.0f}s in all"
    )
    print(render(table, header, notes))

    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    report = {
        "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "mode": mode,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpus": cpus(),
        "seconds": elapsed,
        "payload": {
            "requests": len(payload.bodies),
            "traces_per_request": TRACES_PER_REQUEST,
            "traces": payload.traces,
            "spans": payload.spans,
            "chunks_per_trace": CHUNKS,
            "mean_chunk_bytes": payload.chunk_bytes,
            "chunks_with_pii": payload.pii_chunks,
            "body_bytes": payload.body_bytes,
        },
        "repetitions": sizes.repetitions,
        "assembly_quiet_seconds": float(QUIET_SECONDS),
        "goal_traces_per_second_sqlite": 1000,
        "goal_met": sqlite_rate >= 1000,
        "retries_503": retries,
        "records_not_pending": not_pending,
        "skipped": results.notes,
        "phoenix_version": phoenix_version,
        "runs": {
            name: [r.as_json() for r in runs]
            for name, runs in (
                ("faithmon_sqlite", results.sqlite),
                ("faithmon_postgres", results.postgres),
                ("bare", results.bare),
                ("phoenix", results.phoenix),
            )
        },
        "figures": [f.as_json() for f in table],
    }
    RESULTS.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"\nwrote {relative(RESULTS)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
