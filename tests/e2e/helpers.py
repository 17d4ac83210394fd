"""Helpers for end-to-end tests: run faithmon commands, wait for a server."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
import urllib.request

from click.testing import CliRunner

from faithmon.cli import main

# Commands whose point is a process of their own (signals, a heartbeat, a lifetime);
# the rest run in-process: the answer is the same, without a Python start per call.
_PROCESSES = {"serve", "worker"}


def faithmon(env: dict[str, str], *args: str) -> str:
    """Run a faithmon command with ``env``; fail on a non-zero exit; return its stdout."""
    if args[0] not in _PROCESSES:
        result = CliRunner().invoke(main, list(args), env=env)
        assert result.exit_code == 0, (result.output, result.exception)
        return result.stdout
    done = subprocess.run(
        [sys.executable, "-m", "faithmon", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_until_healthy(url: str, process: subprocess.Popen[str], deadline_s: float = 60) -> None:
    """Poll /healthz until the server answers, failing fast if it died."""
    deadline = time.monotonic() + deadline_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"faithmon serve exited: {process.communicate()[1]}")
        try:
            with urllib.request.urlopen(url + "/healthz", timeout=1) as response:
                if response.status == 200:
                    return
        except OSError:
            time.sleep(0.05)
    raise AssertionError("faithmon serve did not become healthy")
