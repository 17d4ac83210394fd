"""Servers on 127.0.0.1 for the benches: processes started and stopped by pid, and
ASGI apps in a thread of the bench process."""

from __future__ import annotations

import http.client
import os
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import uvicorn

START_DEADLINE = 120.0


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def clean_env(strip: tuple[str, ...], **extra: str) -> dict[str, str]:
    """This process's environment without the variables named ``strip*``, plus ``extra``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(strip)}
    env.update(extra)
    return env


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


@contextmanager
def serve_in_thread(
    app: Any, lifespan: Literal["on", "off"] = "off", backlog: int = 2048
) -> Iterator[int]:
    """Serve ``app`` with uvicorn on 127.0.0.1 in a thread; yields the port once it listens.

    Waiting for uvicorn's startup keeps it (and the app's lifespan) out of the
    time a bench measures after the ``with``.
    """
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    # Accepted sockets inherit TCP_NODELAY on Linux. Without it, uvicorn serving a socket
    # handed to it answers each keep-alive request ~40 ms late (Nagle + delayed ACK).
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.bind(("127.0.0.1", 0))
    port: int = sock.getsockname()[1]
    server = uvicorn.Server(
        uvicorn.Config(
            app, log_level="warning", access_log=False, lifespan=lifespan, backlog=backlog
        )
    )
    thread = threading.Thread(
        target=server.run, kwargs={"sockets": [sock]}, name="bench-uvicorn", daemon=True
    )
    thread.start()
    try:
        deadline = time.monotonic() + 10
        while not server.started:
            if not thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("uvicorn did not start")
            time.sleep(0.01)
        yield port
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()
