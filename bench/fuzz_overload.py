"""The fuzz bench's overload run: two threads POST 4 MB RAG traces as fast as they can
against a server with FAITHMON_MAX_BUFFER_MB=64, retrying 503s after 50 ms."""

from __future__ import annotations

import http.client
import sys
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

from common import PROTOBUF
from fuzz_server import SERVER, rss_mib, server_env, server_stats, status_of, trace_body
from loopback import free_port, serve

OVERLOAD_CAP_MB = 64
CHUNK_BYTES = 400_000
MARKER = b"\xab" * 16  # the trace id of the template trace, replaced per request


def run_overload(seconds: float, workdir: Path) -> dict[str, Any]:
    port = free_port()
    command = [sys.executable, "-c", SERVER, str(port), str(64 * 1024 * 1024)]
    env = server_env(FAITHMON_MAX_BUFFER_MB=str(OVERLOAD_CAP_MB))
    template = trace_body(MARKER, CHUNK_BYTES)
    answers: Counter[str] = Counter()
    accepted_bytes = [0]
    lock = threading.Lock()
    with serve("overload server", command, env, port, workdir / "overload.log") as server:
        idle = rss_mib(server.process.pid, "VmRSS")
        stop = time.monotonic() + seconds

        def client(seed: int) -> None:
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
            n = 0
            while time.monotonic() < stop:
                n += 1
                body = template.replace(MARKER, seed.to_bytes(8, "big") + n.to_bytes(8, "big"))
                try:
                    connection.request(
                        "POST", "/v1/traces", body=body, headers={"Content-Type": PROTOBUF}
                    )
                    response = connection.getresponse()
                    response.read()
                    answer = str(response.status)
                except OSError as exc:
                    connection.close()
                    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
                    answer = type(exc).__name__
                with lock:
                    answers[answer] += 1
                    if answer == "200":
                        accepted_bytes[0] += len(body)
                if answer != "200":
                    time.sleep(0.05)
            connection.close()

        threads = [threading.Thread(target=client, args=(seed,)) for seed in (1, 2)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        healthz_after = status_of(port, "GET", "/healthz")
        # Drained: traces kept for late spans age out; then the RSS a quiet receiver keeps.
        deadline = time.monotonic() + 60
        while server_stats(server)["bytes_in_flight"] and time.monotonic() < deadline:
            time.sleep(0.2)
        time.sleep(1)  # one more pipeline tick, which trims after the drain
        stats = server_stats(server)
        drained = rss_mib(server.process.pid, "VmRSS")
        peak = server.peak_rss_mib()
    return {
        "seconds": seconds,
        "cap_mib": OVERLOAD_CAP_MB,
        "body_mb": len(template) / 1e6,
        "answers": dict(answers),
        "accepted_mb": accepted_bytes[0] / 1e6,
        "idle_rss_mib": idle,
        "peak_rss_mib": peak,
        "drained_rss_mib": drained,
        "peak_bytes_in_flight_mib": stats["peak_bytes_in_flight"] / 1024 / 1024,
        "healthz_after": healthz_after,
        "server_stats": stats,
    }
