"""The process commands: demo, report, serve, worker, rescore."""

from __future__ import annotations

import contextlib
import json
import logging
import os
import random
import socket
import sys
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    from ..api.app import Auth
    from ..api.v1 import ReadOptions
    from ..config import Settings

from ..errors import ConfigError
from . import wiring
from ._common import (
    configure_logging,
    counted,
    database_option,
    iso_time,
    json_option,
    load_settings,
)
from .heartbeat import Heartbeat


@click.command()
@click.option(
    "--requests",
    "count",
    default=1000,
    show_default=True,
    type=click.IntRange(min=1),
    help="Requests to send.",
)
@click.option(
    "--seed",
    default=7,
    show_default=True,
    help="Seed of the simulated traffic and its trace ids: a seed gives the same records "
    "and review queue each run.",
)
@click.option(
    "-o",
    "--output",
    "report_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default="faithmon-report.html",
    show_default=True,
    help="Where to write the HTML report.",
)
@click.option(
    "--report",
    "old_report_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    hidden=True,
)
@click.option(
    "--database",
    default=None,
    metavar="URL|PATH",
    help="Write into this database (a URL, or a SQLite file) instead of ./faithmon-demo.db; "
    "it must be empty or an earlier demo's.",
)
def demo(
    count: int, seed: int, report_path: Path, old_report_path: Path | None, database: str | None
) -> None:
    """Run the whole loop on a sample RAG app: ingest, score, detect drift, alert.

    The demo writes only into a fresh database of its own, never FAITHMON_DATABASE_URL.
    """
    from ..demo import database as demo_database
    from ..demo.run import run_demo

    report_path = old_report_path or report_path
    _writable_folder(report_path)
    url = demo_database.as_url(database) if database else demo_database.DEFAULT_DEMO_URL
    # Its own database and a throwaway key: nothing of the data dir is read.
    settings = replace(load_settings(state=False), database_url=demo_database.prepare(url))
    configure_logging("WARNING")
    # The tracer's ids come from the random module: seeded, a seed's traffic keeps its trace
    # ids, and with them what the sampler keeps and the review queue picks (both by id).
    random.seed(seed)
    run_demo(settings, requests=count, seed=seed, out=sys.stdout, report=report_path)


def _writable_folder(path: Path) -> None:
    """Refuse an output file whose folder does not exist before any work is done."""
    folder = path.expanduser().resolve().parent
    if not folder.is_dir():
        raise click.ClickException(f"cannot write {path}: the folder {folder} does not exist")


@click.command()
@click.option(
    "-o",
    "--output",
    "out_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default="faithmon-report.html",
    show_default=True,
    help="Where to write the HTML report.",
)
@click.option("--out", "old_out_path", type=click.Path(dir_okay=False, path_type=Path), hidden=True)
@database_option
def report(out_path: Path, old_out_path: Path | None) -> None:
    """Write a self-contained HTML report: rates over time per segment, alerts, examples."""
    from ..report import write_report

    out_path = old_out_path or out_path
    _writable_folder(out_path)
    settings = load_settings()
    judge_ = wiring.make_judge(settings)
    with wiring.open_store(settings, must_exist=True) as sessions:
        write_report(sessions, judge_.name, out_path, floor=wiring.proof_floor(settings))
    click.echo(f"report: {out_path}")


@click.command()
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option(
    "--port",
    default=4318,
    show_default=True,
    type=click.IntRange(0, 65535),
    help="OTLP/HTTP, API and dashboard port (0: any free port).",
)
@click.option(
    "--grpc-port",
    default=4317,
    show_default=True,
    type=click.IntRange(0, 65535),
    help="OTLP/gRPC port; 0 turns gRPC off.",
)
@click.option(
    "--spool-dir",
    metavar="DIR",
    default=None,
    help="This receiver's spool folder, one per receiver (default: FAITHMON_SPOOL_DIR, "
    "in the data dir); an empty value turns the spool off.",
)
@database_option
def serve(host: str, port: int, grpc_port: int, spool_dir: str | None) -> None:
    """Receive OTLP traces and logs (HTTP and gRPC) and store RAG records."""
    from ..api import server
    from ..api.app import create_app
    from ..api.auth import ingest_authorizer
    from ..ingest import grpc_server

    # A folder typed on the command line is the shell's, not the data dir's.
    given = os.path.abspath(os.path.expanduser(spool_dir)) if spool_dir else spool_dir
    settings = load_settings() if given is None else load_settings(spool_dir=given)
    configure_logging(settings.log_level)
    try:
        sock = server.listen(host, port)
    except OSError as exc:
        raise click.ClickException(
            f"cannot listen on {host}:{port}: {exc.strerror or exc}; choose another --port "
            "or stop what holds it"
        ) from None
    try:
        spool = wiring.open_spool(settings)
    except ConfigError as exc:
        sock.close()
        raise click.ClickException(str(exc)) from None
    with contextlib.ExitStack() as stack:
        stack.callback(sock.close)
        if spool is not None:
            stack.callback(spool.close)
        # A database that does not answer yet delays writes, not the start: exports are
        # acknowledged into the spool meanwhile.
        sessions, before_write = stack.enter_context(wiring.open_receiver_store(settings))
        auth = wiring.make_auth(settings, sessions, host)
        _check_auth(auth, host)
        pipeline = wiring.store_pipeline(
            settings,
            sessions,
            spool=spool,
            processes=settings.ingest_processes,
            before_write=before_write,
        )
        pipeline.recover(wiring.make_stored(sessions))
        authorize = None if settings.auth == "off" else ingest_authorizer(auth.ring, auth.config)
        grpc = (
            grpc_server.start(
                pipeline, host, grpc_port, settings.max_body_bytes, authorize=authorize
            )[0]
            if grpc_port
            else None
        )

        def stop_grpc() -> None:
            if grpc is not None:
                grpc.stop(grace=5).wait()

        app = create_app(
            pipeline,
            settings.max_body_bytes,
            run_pipeline=True,
            before_stop=stop_grpc,
            sessions=sessions,
            auth=None if settings.auth == "off" else auth,
            reads=_read_options(settings),
        )
        bound = sock.getsockname()[1]
        # What the worker reads to tell a receiver that stopped saving (ingest_error).
        beat = Heartbeat(
            sessions,
            pipeline,
            f"{socket.gethostname()}:{bound}",
            min(15.0, settings.alert_receiver_stale / 4),
        )
        beat.start()
        stack.callback(beat.stop)
        log = logging.getLogger(__name__)
        url = _url(host, bound)
        log.info("faithmon: receiving OTLP on %s (POST /v1/traces)", url)
        # Printed, not only logged: the address to open whatever FAITHMON_LOG_LEVEL says.
        click.echo(f"faithmon: the dashboard is at {url}/ and the API at {url}/api/v1", err=True)
        server.serve(
            app, sock, pipeline, before_drain=stop_grpc, drain_seconds=settings.drain_seconds
        )


@click.command()
@click.option("--once", is_flag=True, help="Run each job once and exit.")
@click.option("--check", is_flag=True, help="Exit 0 if a worker's heartbeat is fresh, else 1.")
@json_option
@database_option
def worker(once: bool, check: bool, as_json: bool) -> None:
    """Score pending records, detect drift and apply retention on a schedule."""
    from . import worker_process

    settings = load_settings()
    if check:
        fresh, why = worker_process.healthy(settings)
        click.echo(json.dumps({"healthy": fresh, "detail": why}) if as_json else why)
        sys.exit(0 if fresh else 1)
    configure_logging(settings.log_level)
    try:
        done = worker_process.run_worker(settings, once)
    except ConfigError as exc:
        raise click.ClickException(str(exc)) from None
    if once:
        if as_json:
            click.echo(json.dumps(done))
            return
        click.echo(
            f"scored {done['scored']} records; {done['alert_changes']} alert changes; "
            f"retention deleted {done['retention_deleted']} records; "
            f"{done['sentinel_runs']} sentinel runs"
        )


@click.command()
@click.option(
    "--since",
    required=True,
    metavar="TIME",
    callback=iso_time,
    help="Start of the window (ISO-8601; without an offset, UTC).",
)
@click.option("--until", metavar="TIME", callback=iso_time, help="End of the window (ISO-8601).")
@click.option("--segment", multiple=True, help="Only records with this label=value.")
@json_option
@database_option
def rescore(
    since: datetime, until: datetime | None, segment: tuple[str, ...], as_json: bool
) -> None:
    """Queue a window for scoring again by the current judge; earlier evaluations stay."""
    from ..store import work

    settings = load_settings()
    judge = wiring.make_judge(settings)
    pairs = {}
    for item in segment:
        name, sep, value = item.partition("=")
        if not sep:
            raise click.ClickException(f"--segment expects label=value, got {item!r}")
        pairs[name] = value
    with wiring.open_store(settings, must_exist=True) as sessions, sessions.begin() as session:
        queued = work.reset_for_rescore(
            session,
            judge.name,
            since,
            until,
            pairs,
        )
    if as_json:
        click.echo(json.dumps({"queued": queued, "judge": judge.name}))
        return
    click.echo(f"queued {counted(queued, 'record')} for {judge.name}; the worker scores them")


def _url(host: str, port: int) -> str:
    """The address to open for a bound ``host``: on every address, this machine's own."""
    if host in ("", "0.0.0.0", "::", "[::]"):
        host = "localhost"
    elif ":" in host and not host.startswith("["):
        host = f"[{host}]"  # an IPv6 address
    return f"http://{host}:{port}"


def _check_auth(auth: Auth, host: str) -> None:
    """Refuse to serve an open door beyond loopback; say at start which door it is."""
    from ..api.auth import is_open

    log = logging.getLogger(__name__)
    mode = auth.config.mode
    try:
        auth.ring.refresh()
    except Exception as exc:
        if mode != "off":  # the guard answers 503 to what needs a key until keys are read
            log.warning(
                "faithmon: cannot read API keys yet (%s); requests that need a key get 503 "
                "until the database answers",
                type(exc).__name__,
            )
            return
    if mode == "off":
        log.warning("faithmon: FAITHMON_AUTH=off: every route is open to whoever reaches it")
        return
    if not auth.config.loopback and auth.ring.empty():
        raise click.ClickException(
            f"serve binds {host}, beyond loopback, and no API key exists: create one "
            "(faithmon keys create --scopes admin) or set FAITHMON_AUTH=off explicitly"
        )
    if is_open(auth.config, auth.ring):
        log.warning(
            "faithmon: open without API keys (FAITHMON_AUTH=auto, loopback, no key yet); "
            "the first key created closes it"
        )
    else:
        log.info("faithmon: API keys required (FAITHMON_AUTH=%s)", mode)


def _read_options(settings: Settings) -> ReadOptions:
    """What the API reports on: the configured judge (when this process can build it; a
    receiver may hold no judge key, and then the newest evaluation's judge is shown)."""
    from ..api.v1 import ReadOptions

    try:
        judge: str | None = wiring.make_judge(settings).name
    except ConfigError:
        judge = None
    return ReadOptions(
        judge=judge,
        drift=wiring.drift_config(settings),
        daily_token_budget=settings.judge_daily_budget,
        price_input=settings.judge_price_input,
        price_output=settings.judge_price_output,
        stale_after=3 * settings.drift_interval,
        proof_floor=wiring.proof_floor(settings),
    )
