"""The faithmon image's HEALTHCHECK: one check for every command the image runs.

It reads the container's command line (PID 1: faithmon itself, or tini / docker-init
followed by it) and checks what runs:
- `faithmon serve`: GET /healthz on 127.0.0.1 and the --port given (default 4318), which
  answers 503 while the store rejects writes or the buffer is full;
- `faithmon worker`: `faithmon worker --check`, which reads the worker's heartbeat file;
- anything else (`db upgrade` and other one-shots): healthy.
"""

from __future__ import annotations

import itertools
import subprocess
import sys
import urllib.request
from pathlib import Path


def command_line(path: str = "/proc/1/cmdline") -> list[str]:
    return [part.decode() for part in Path(path).read_bytes().split(b"\0") if part]


def check(words: list[str]) -> int:
    if "worker" in words:
        return subprocess.call(["faithmon", "worker", "--check"], timeout=20)
    if "serve" in words:
        port = "4318"
        for flag, value in itertools.pairwise(words):
            if flag == "--port":
                port = value
            elif flag.startswith("--port="):
                port = flag.split("=", 1)[1]
        if words[-1].startswith("--port="):
            port = words[-1].split("=", 1)[1]
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=4) as reply:
                return 0 if reply.status == 200 else 1
        except OSError as exc:
            print(f"faithmon serve unhealthy: {exc}", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(check(command_line()))
