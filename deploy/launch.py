"""Run a faithmon fleet on one host: N `faithmon serve` receivers and M `faithmon worker`s.

    python deploy/launch.py --receivers 2 --workers 3 [--base-port 4318] [--grpc-base-port 0]
                            [--host 127.0.0.1] [--env-file deploy/.env] [--run-dir DIR]

Every process gets the current environment (plus ``--env-file``; a variable already set in the
environment wins) and so shares one ``FAITHMON_DATABASE_URL``: use PostgreSQL, since SQLite
allows one worker. The schema is upgraded once before anything starts (``--no-migrate`` skips
it). Receiver i listens on ``--base-port + i`` (and on ``--grpc-base-port + i`` for OTLP/gRPC;
0, the default, turns gRPC off) with its own spool folder ``--run-dir/serve-I.spool``; each
worker gets its own heartbeat file in ``--run-dir``, so
``FAITHMON_WORKER_HEARTBEAT_FILE=DIR/worker-J.heartbeat faithmon worker --check`` checks it.

All spans of one trace must reach the same receiver: put an OpenTelemetry Collector with the
loadbalancing exporter (``deploy/otel-collector-fleet.yaml``) in front, or route by trace id
yourself. SIGTERM or SIGINT stops the fleet: SIGTERM to every process, SIGKILL to any still
running after ``--stop-timeout`` seconds. A receiver saves the traces it buffers before it exits.

The core is importable (``Fleet``); ``tests/e2e/test_scale_out.py`` drives it.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import IO, Any

STOP_TIMEOUT = 60.0
READY_TIMEOUT = 60.0


def read_env_file(path: str | os.PathLike[str]) -> dict[str, str]:
    """KEY=VALUE lines (compose's .env format, without interpolation); # starts a comment."""
    values: dict[str, str] = {}
    for number, line in enumerate(Path(path).read_text().splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("export "):
            line = line[len("export ") :].lstrip()
        key, sep, value = line.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"{path}:{number}: expected KEY=VALUE")
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]
        values[key.strip()] = value
    return values


@dataclass
class Member:
    """One process of the fleet."""

    name: str
    argv: list[str]
    env: dict[str, str]
    url: str | None = None
    process: subprocess.Popen[bytes] | None = None
    log: IO[bytes] | None = None
    restarts: int = 0

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    @property
    def pid(self) -> int | None:
        return self.process.pid if self.process is not None else None


@dataclass
class Fleet:
    """N receivers and M workers against one database, started and stopped together.

    ``log_dir`` set: each process writes its output to ``<name>.log`` there (appended
    across restarts); unset: output goes to this process's stdout and stderr.
    """

    receivers: int
    workers: int
    host: str = "127.0.0.1"
    base_port: int = 4318
    grpc_base_port: int = 0
    env: Mapping[str, str] | None = None
    run_dir: Path | None = None
    log_dir: Path | None = None
    stop_timeout: float = STOP_TIMEOUT
    ready_timeout: float = READY_TIMEOUT
    migrate: bool = True
    python: str = sys.executable
    members: list[Member] = field(default_factory=list, init=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)

    def __post_init__(self) -> None:
        if self.receivers < 0 or self.workers < 0:
            raise ValueError("receivers and workers must not be negative")
        base_env = dict(os.environ if self.env is None else self.env)
        if self.run_dir is None:
            self.run_dir = Path(tempfile.mkdtemp(prefix="faithmon-fleet-"))
        self.run_dir.mkdir(parents=True, exist_ok=True)
        faithmon = [self.python, "-m", "faithmon"]
        for i in range(self.receivers):
            port = self.base_port + i
            grpc_port = self.grpc_base_port + i if self.grpc_base_port else 0
            argv = [*faithmon, "serve", "--host", self.host, "--port", str(port)]
            argv += ["--grpc-port", str(grpc_port)]
            url = f"http://{_url_host(self.host)}:{port}"
            env = dict(base_env)
            # Each receiver owns its spool; a restarted receiver replays its own.
            env["FAITHMON_SPOOL_DIR"] = str(self.run_dir / f"serve-{i}.spool")
            self.members.append(Member(f"serve-{i}", argv, env, url=url))
        for j in range(self.workers):
            env = dict(base_env)
            env["FAITHMON_WORKER_HEARTBEAT_FILE"] = str(self.run_dir / f"worker-{j}.heartbeat")
            self.members.append(Member(f"worker-{j}", [*faithmon, "worker"], env))

    # --- views -------------------------------------------------------------------------

    @property
    def receiver_members(self) -> list[Member]:
        return [m for m in self.members if m.name.startswith("serve-")]

    @property
    def worker_members(self) -> list[Member]:
        return [m for m in self.members if m.name.startswith("worker-")]

    @property
    def urls(self) -> list[str]:
        """The receivers' OTLP/HTTP base URLs (POST to ``<url>/v1/traces``)."""
        return [m.url for m in self.receiver_members if m.url is not None]

    def describe(self) -> list[str]:
        lines = []
        for member in self.members:
            where = f" {member.url}" if member.url else ""
            grpc = member.argv[-1] if member.name.startswith("serve-") else "0"
            if grpc != "0":
                where += f" grpc {self.host}:{grpc}"
            lines.append(f"{member.name} pid {member.pid}{where}")
        return lines

    # --- lifecycle ---------------------------------------------------------------------

    def start(self) -> None:
        """Upgrade the schema, start every process, and wait until each receiver is healthy."""
        if self.migrate:
            env = dict(os.environ if self.env is None else self.env)
            done = subprocess.run(
                [self.python, "-m", "faithmon", "db", "upgrade"],
                env=env,
                capture_output=True,
                text=True,
                timeout=300,
                check=False,
            )
            if done.returncode != 0:
                raise RuntimeError(f"faithmon db upgrade failed: {done.stderr.strip()}")
        try:
            for member in self.members:
                self._spawn(member)
            for member in self.receiver_members:
                self._wait_ready(member)
        except BaseException:
            self.stop()
            raise

    def stop(self) -> dict[str, int | None]:
        """SIGTERM every process at once, SIGKILL what is left after ``stop_timeout``.

        Returns each process's exit status (negative: killed by that signal).
        """
        return self._terminate([m for m in self.members if m.process is not None])

    def restart_receiver(self, index: int, kill: bool = False) -> int | None:
        """Stop receiver ``index`` with SIGTERM (it saves its buffer), or with SIGKILL (its
        spool replays what it acknowledged), start it again on the same port and wait until
        it is healthy; returns the old process's exit status."""
        member = self.receiver_members[index]
        if kill and member.process is not None:
            if member.process.poll() is None:
                member.process.kill()
            status: int | None = member.process.wait()
        else:
            status = self._terminate([member])[member.name]
        member.restarts += 1
        self._spawn(member)
        self._wait_ready(member)
        return status

    def stop_receiver(self, index: int) -> int | None:
        member = self.receiver_members[index]
        return self._terminate([member])[member.name]

    def start_receiver(self, index: int) -> None:
        member = self.receiver_members[index]
        self._spawn(member)
        self._wait_ready(member)

    def kill_worker(self, index: int, restart: bool = False) -> int | None:
        """SIGKILL worker ``index`` (its leases stay until they expire); optionally start a
        new one in its place. Returns the killed process's exit status."""
        member = self.worker_members[index]
        process = member.process
        if process is None:
            return None
        if process.poll() is None:
            process.kill()
        status = process.wait()
        if restart:
            member.restarts += 1
            self._spawn(member)
        return status

    def stop_worker(self, index: int) -> int | None:
        member = self.worker_members[index]
        return self._terminate([member])[member.name]

    def exited(self) -> list[Member]:
        """Members that were started and are no longer running."""
        return [m for m in self.members if m.process is not None and not m.running]

    def __enter__(self) -> Fleet:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # --- internals ---------------------------------------------------------------------

    def _spawn(self, member: Member) -> None:
        with self._lock:
            if member.running:
                raise RuntimeError(f"{member.name} is already running")
            output: Any = None
            if self.log_dir is not None:
                self.log_dir.mkdir(parents=True, exist_ok=True)
                if member.log is None:
                    member.log = (self.log_dir / f"{member.name}.log").open("ab")
                output = member.log
            member.process = subprocess.Popen(
                member.argv,
                env=member.env,
                stdout=output,
                stderr=subprocess.STDOUT if output is not None else None,
                stdin=subprocess.DEVNULL,
                # Its own session: a Ctrl-C in the terminal reaches the launcher only,
                # which then stops every process in order.
                start_new_session=True,
            )

    def _wait_ready(self, member: Member) -> None:
        assert member.url is not None and member.process is not None
        deadline = time.monotonic() + self.ready_timeout
        while time.monotonic() < deadline:
            if member.process.poll() is not None:
                raise RuntimeError(
                    f"{member.name} exited with {member.process.returncode} before it was ready"
                    + (f"; see {self.log_dir}/{member.name}.log" if self.log_dir else "")
                )
            try:
                with urllib.request.urlopen(member.url + "/healthz", timeout=2) as response:
                    if response.status == 200:
                        return
            except (OSError, urllib.error.URLError):
                pass
            time.sleep(0.05)
        raise RuntimeError(f"{member.name} was not healthy within {self.ready_timeout:.0f}s")

    def _terminate(self, members: Sequence[Member]) -> dict[str, int | None]:
        statuses: dict[str, int | None] = {}
        for member in members:
            if member.running:
                assert member.process is not None
                member.process.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + self.stop_timeout
        for member in members:
            process = member.process
            if process is None:
                statuses[member.name] = None
                continue
            try:
                process.wait(timeout=max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                print(
                    f"faithmon-launch: {member.name} still running after "
                    f"{self.stop_timeout:.0f}s; sending SIGKILL",
                    file=sys.stderr,
                )
                process.kill()
                process.wait()
            statuses[member.name] = process.returncode
        for member in members:
            if member.log is not None:
                member.log.flush()
        return statuses

    def close_logs(self) -> None:
        for member in self.members:
            if member.log is not None:
                member.log.close()
                member.log = None


def _url_host(host: str) -> str:
    if host in ("0.0.0.0", ""):
        return "127.0.0.1"
    if host == "::":
        return "[::1]"
    return f"[{host}]" if ":" in host else host


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="deploy/launch.py", description=__doc__.split("\n\n")[0] if __doc__ else None
    )
    parser.add_argument("--receivers", type=int, default=1, help="faithmon serve processes")
    parser.add_argument("--workers", type=int, default=1, help="faithmon worker processes")
    parser.add_argument("--host", default="127.0.0.1", help="address the receivers listen on")
    parser.add_argument(
        "--base-port", type=int, default=4318, help="OTLP/HTTP port of receiver 0; +i for i"
    )
    parser.add_argument(
        "--grpc-base-port", type=int, default=0, help="OTLP/gRPC port of receiver 0 (0: off)"
    )
    parser.add_argument("--env-file", help="KEY=VALUE settings added to the environment")
    parser.add_argument("--run-dir", type=Path, help="heartbeat files (default: a temp dir)")
    parser.add_argument("--log-dir", type=Path, help="one log file per process (default: ours)")
    parser.add_argument("--stop-timeout", type=float, default=STOP_TIMEOUT)
    parser.add_argument("--no-migrate", action="store_true", help="skip `faithmon db upgrade`")
    args = parser.parse_args(argv)

    env = dict(os.environ)
    if args.env_file:
        env = {**read_env_file(args.env_file), **env}
    if args.workers > 1 and env.get("FAITHMON_DATABASE_URL", "sqlite").startswith("sqlite"):
        parser.error("several workers need PostgreSQL: set FAITHMON_DATABASE_URL")
    fleet = Fleet(
        receivers=args.receivers,
        workers=args.workers,
        host=args.host,
        base_port=args.base_port,
        grpc_base_port=args.grpc_base_port,
        env=env,
        run_dir=args.run_dir,
        log_dir=args.log_dir,
        stop_timeout=args.stop_timeout,
        migrate=not args.no_migrate,
    )
    stopping = threading.Event()

    def on_signal(signum: int, frame: FrameType | None) -> None:
        stopping.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    try:
        fleet.start()
    except RuntimeError as exc:
        print(f"faithmon-launch: {exc}", file=sys.stderr)
        return 1
    for line in fleet.describe():
        print(line, flush=True)
    print("faithmon-launch: running; SIGTERM or Ctrl-C stops the fleet", flush=True)
    reported: set[int] = set()
    while not stopping.wait(0.5):
        for member in fleet.exited():
            assert member.process is not None
            if member.process.pid not in reported:
                reported.add(member.process.pid)
                print(
                    f"faithmon-launch: {member.name} exited with {member.process.returncode}",
                    file=sys.stderr,
                    flush=True,
                )
    statuses = fleet.stop()
    fleet.close_logs()
    for name, status in statuses.items():
        print(f"{name} exited with {status}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
