"""The durability bench's first run: a database outage while an app sends traces
through the shim's own exporter, PostgreSQL reached through a cuttable proxy."""

from __future__ import annotations

import http.client
import json
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

from common import postgres_database
from durability_setup import (
    ANSWER,
    STORE_DEADLINE,
    Sizes,
    Watch,
    counts,
    log_summary,
    serve_command,
    server_env,
    stored_ids,
    upgrade,
)
from loopback import Server, free_port, serve
from sqlalchemy import Engine, create_engine, make_url
from sqlalchemy.pool import NullPool

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.e2e.proxy import CuttableProxy

APP_DEADLINE = 300.0

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
