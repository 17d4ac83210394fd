"""The ``faithmon`` command: the composition root that wires the parts together."""

from __future__ import annotations

import contextlib
import json
import logging
import sys
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

import click

from . import __version__, runtime
from .alerts import to_json
from .config import Settings
from .errors import ConfigError
from .model import segment_key
from .store import engine as store_engine
from .store import repo
from .views import record_json


def _settings() -> Settings:
    try:
        return Settings.from_env()
    except ConfigError as exc:
        raise click.ClickException(str(exc)) from None


def _configure_logging(level: str) -> None:
    logging.basicConfig(
        level=level, format="%(asctime)s %(levelname)s %(name)s: %(message)s", stream=sys.stderr
    )


@click.group()
@click.version_option(__version__, prog_name="faithmon")
def main() -> None:
    """faithmon: monitor the faithfulness of a RAG app's answers in production."""


@main.command()
@click.option("--requests", "count", default=400, show_default=True, help="Requests to send.")
@click.option("--seed", default=7, show_default=True, help="Seed of the simulated traffic.")
@click.option(
    "--report",
    "report_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default="faithmon-report.html",
    show_default=True,
    help="Where to write the HTML report.",
)
def demo(count: int, seed: int, report_path: Path) -> None:
    """Run the whole loop on a sample RAG app: ingest, score, detect drift, alert."""
    import os

    from .demo.run import DEFAULT_DEMO_URL, run_demo

    if "FAITHMON_DATABASE_URL" in os.environ:
        settings = _settings()
    else:
        # A fresh demo database each run, so the story starts from nothing.
        for suffix in ("", "-wal", "-shm"):
            Path(f"faithmon-demo.db{suffix}").unlink(missing_ok=True)
        settings = replace(_settings(), database_url=DEFAULT_DEMO_URL)
    _configure_logging("WARNING")
    run_demo(settings, requests=count, seed=seed, out=sys.stdout, report=report_path)


@main.command()
@click.option(
    "--out",
    "out_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default="faithmon-report.html",
    show_default=True,
    help="Where to write the HTML report.",
)
def report(out_path: Path) -> None:
    """Write a self-contained HTML report: rates over time per segment, alerts, examples."""
    from .report import write_report

    settings = _settings()
    judge_ = runtime.make_judge(settings)
    with runtime.open_store(settings) as sessions:
        write_report(sessions, judge_.name, out_path)
    click.echo(f"report: {out_path}")


@main.command()
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option("--port", default=4318, show_default=True, help="OTLP/HTTP port.")
@click.option(
    "--grpc-port", default=4317, show_default=True, help="OTLP/gRPC port; 0 turns gRPC off."
)
def serve(host: str, port: int, grpc_port: int) -> None:
    """Receive OTLP traces and logs (HTTP and gRPC) and store RAG records."""
    from . import serving
    from .api import metrics as metrics_api
    from .ingest import grpc_server
    from .ingest.http import create_app

    settings = _settings()
    _configure_logging(settings.log_level)
    try:
        spool = runtime.open_spool(settings)
    except ConfigError as exc:
        raise click.ClickException(str(exc)) from None
    with runtime.open_store(settings) as sessions, contextlib.ExitStack() as stack:
        if spool is not None:
            stack.callback(spool.close)
        pipeline = runtime.store_pipeline(settings, sessions, spool=spool)
        pipeline.recover(runtime.make_stored(sessions))
        grpc = (
            grpc_server.start(pipeline, host, grpc_port, settings.max_body_bytes)[0]
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
            extra_routes=[metrics_api.route(sessions)],
        )
        logging.getLogger(__name__).info("faithmon: receiving OTLP on http://%s:%d", host, port)
        serving.serve(app, host, port, pipeline, before_drain=stop_grpc)


@main.command()
@click.option("--once", is_flag=True, help="Run each job once and exit.")
@click.option("--check", is_flag=True, help="Exit 0 if a worker's heartbeat is fresh, else 1.")
def worker(once: bool, check: bool) -> None:
    """Score pending records, detect drift and apply retention on a schedule."""
    from . import service

    settings = _settings()
    if check:
        sys.exit(0 if service.healthy(settings) else 1)
    _configure_logging(settings.log_level)
    try:
        summary = service.run_worker(settings, once)
    except ConfigError as exc:
        raise click.ClickException(str(exc)) from None
    if once:
        click.echo(summary)


@main.command()
@click.option("--since", required=True, type=click.DateTime(), help="Start of the window (UTC).")
@click.option("--until", type=click.DateTime(), default=None, help="End of the window (UTC).")
@click.option("--segment", multiple=True, help="Only records with this label=value.")
def rescore(since: datetime, until: datetime | None, segment: tuple[str, ...]) -> None:
    """Queue a window for scoring again by the current judge; earlier evaluations stay."""
    from .store import work

    settings = _settings()
    judge = runtime.make_judge(settings)
    pairs = {}
    for item in segment:
        name, sep, value = item.partition("=")
        if not sep:
            raise click.ClickException(f"--segment expects label=value, got {item!r}")
        pairs[name] = value
    with runtime.open_store(settings) as sessions, sessions.begin() as session:
        queued = work.reset_for_rescore(
            session,
            judge.name,
            since.replace(tzinfo=UTC),
            until.replace(tzinfo=UTC) if until else None,
            pairs,
        )
    click.echo(f"queued {queued} records for {judge.name}; the worker scores them")


@main.group()
def sentinel() -> None:
    """Sentinel sets: known cases that check the judge itself for drift."""


@sentinel.command("add")
@click.argument("file", type=click.File("r"))
@click.option("--name", required=True, help="The set's name; its version is its content hash.")
def sentinel_add(file: IO[str], name: str) -> None:
    """Load a JSONL set: question, chunks, answer, expected (supported|unsupported)."""
    from .drift import sentinels
    from .store import sentinels as store_sentinels

    try:
        cases = sentinels.parse_cases(file)
    except ValueError as exc:
        raise click.ClickException(f"{file.name}: {exc}") from None
    version = sentinels.version(cases)
    settings = _settings()
    with runtime.open_store(settings) as sessions, sessions.begin() as session:
        added = store_sentinels.add_set(session, name, version, cases)
    state = "added" if added else "already present"
    click.echo(f"sentinel set {name} version {version}: {len(cases)} cases, {state}")


@sentinel.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def sentinel_list(as_json: bool) -> None:
    """Sentinel sets and their runs, per judge configuration."""
    from .store import sentinels as store_sentinels

    settings = _settings()
    with runtime.open_store(settings) as sessions, sessions() as session:
        sets = store_sentinels.latest_sets(session)
        runs = store_sentinels.list_runs(session)
    if as_json:
        listed = [{"name": n, "version": v, "cases": len(c)} for _, n, v, c in sets]
        click.echo(json.dumps({"sets": listed, "runs": runs}, indent=2))
        return
    for _, name, version, cases in sets:
        click.echo(f"{name} {version}: {len(cases)} cases")
    for run in runs:
        click.echo(
            f"  {run['ran_at']} {run['set']} {run['judge']}: {run['state']}, accuracy "
            f"{run['accuracy']:.2f}, false flags {run['false_flag_rate']:.2f}, misses "
            f"{run['miss_rate']:.2f}, gap {run['score_gap']:.2f}"
        )


@sentinel.command("run")
@click.option("--name", default=None, help="One set (default: all).")
def sentinel_run(name: str | None) -> None:
    """Run the sentinel sets through the current judge now."""
    from . import jobs

    settings = _settings()
    _configure_logging(settings.log_level)
    try:
        judge_ = runtime.make_judge(settings)
        sinks = runtime.make_sinks(settings)
    except ConfigError as exc:
        raise click.ClickException(str(exc)) from None
    with runtime.open_store(settings) as sessions:
        done = jobs.run_sentinels(sessions, judge_, sinks=sinks, name=name)
    for run in done:
        click.echo(
            f"{run.name} {run.version}: accuracy {run.result.accuracy:.2f}, judge "
            f"{run.drift.direction}{' (drift)' if run.drift.drifting else ''}"
        )


@main.group()
def judge() -> None:
    """Judge configurations: blocks and usage."""


@judge.command("status")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def judge_status(as_json: bool) -> None:
    """Blocked judge configurations and judge usage per day."""
    from .store import work

    settings = _settings()
    with runtime.open_store(settings) as sessions, sessions() as session:
        status: dict[str, Any] = {
            "judge": runtime.make_judge(settings).name,
            "blocked": work.judge_blocks(session),
            "usage": work.usage_by_day(session),
        }
    if as_json:
        click.echo(json.dumps(status, indent=2))
        return
    click.echo(f"current judge: {status['judge']}")
    for block in status["blocked"]:
        click.echo(f"BLOCKED {block['judge']} since {block['blocked_at']}: {block['reason']}")
    for day in status["usage"]:
        click.echo(
            f"{day['day']} {day['judge']}: {day['calls']} calls, "
            f"{day['prompt_tokens'] + day['completion_tokens']} tokens"
        )


@judge.command("unblock")
@click.option("--judge", "name", default=None, help="One judge fingerprint (default: all).")
def judge_unblock(name: str | None) -> None:
    """Let a blocked judge configuration score again (after fixing its key or billing)."""
    from .store import work

    settings = _settings()
    with runtime.open_store(settings) as sessions, sessions.begin() as session:
        count = work.unblock(session, name)
    click.echo(f"unblocked {count} judge configuration(s)")


@main.command()
@click.argument("file", type=click.File("r"))
@click.option("-o", "--output", type=click.File("w"), default="-", help="Output JSONL (stdout).")
@click.option(
    "--judge",
    "judge_name",
    type=click.Choice(["offline", "openai"]),
    default=None,
    help="Judge to use (default: FAITHMON_JUDGE).",
)
def score(file: IO[str], output: IO[str], judge_name: str | None) -> None:
    """Score a JSONL file of {user_input, response, retrieved_contexts}; no database.

    DeepEval's names (input, actual_output, retrieval_context) are read too.
    """
    from .judge.jsonl import score_lines

    settings = _settings()
    try:
        judge = runtime.make_judge(settings, judge_name)
    except ConfigError as exc:
        raise click.ClickException(str(exc)) from None
    lines = file.readlines()
    errors = 0
    with click.progressbar(
        lines, label="scoring", file=sys.stderr, show_pos=True, width=30
    ) as progress:
        for item, error in score_lines(judge, progress):
            if error is not None:
                errors += 1
                click.echo(f"\n{error}", err=True)
            output.write(json.dumps(item, ensure_ascii=False) + "\n")
    if errors:
        raise click.ClickException(f"{errors} lines could not be scored")


@main.group()
def sample() -> None:
    """Sampling decisions and counts."""


@sample.command("explain")
@click.argument("trace_id")
def sample_explain(trace_id: str) -> None:
    """Say why a trace was or was not kept."""
    from .ingest.sampler import ratio_keeps
    from .store import sampling as store_sampling

    trace_id = trace_id.strip().lower()
    if len(trace_id) != 32 or not all(c in "0123456789abcdef" for c in trace_id):
        raise click.ClickException("a trace id is 32 hexadecimal digits")
    settings = _settings()
    with runtime.open_store(settings) as sessions, sessions() as session:
        found = store_sampling.decision_for(session, trace_id)
    if found is not None:
        where, facts = found
        click.echo(f"{trace_id}: {where} ({facts['reason']})")
        for key, value in facts.items():
            if key != "reason":
                click.echo(f"  {key}: {value}")
        return
    rate = settings.sample_rate
    if ratio_keeps(trace_id, rate):
        click.echo(
            f"{trace_id}: not seen. At FAITHMON_SAMPLE_RATE={rate} its id would be kept, so it "
            "did not reach this faithmon (or is still being assembled, or was not a RAG trace)."
        )
    else:
        click.echo(
            f"{trace_id}: not stored. At FAITHMON_SAMPLE_RATE={rate} its id falls outside the "
            "sample (sampled_out), unless a keep rule applied; faithmon may also never have "
            "seen it."
        )


@sample.command("counts")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON array.")
def sample_counts(as_json: bool) -> None:
    """Seen and kept records per segment and hour, for correcting rates for sampling."""
    from .store import sampling as store_sampling

    settings = _settings()
    with runtime.open_store(settings) as sessions, sessions() as session:
        tallies = store_sampling.sampling_counts(session)
    rows = [
        {
            "hour": t.hour.isoformat(),
            "segment": dict(t.segment),
            "reason": t.reason,
            "count": t.count,
        }
        for t in tallies
    ]
    if as_json:
        click.echo(json.dumps(rows, indent=2))
        return
    for tally in tallies:
        segment = segment_key(tally.segment) or "-"
        click.echo(f"{tally.hour.isoformat()}  {segment:<40} {tally.reason:<24} {tally.count}")


@main.group()
def db() -> None:
    """Database schema commands."""


@db.command("upgrade")
@click.option("--revision", default="head", show_default=True, help="Target revision.")
def db_upgrade(revision: str) -> None:
    """Create or upgrade the schema of FAITHMON_DATABASE_URL."""
    settings = _settings()
    engine = store_engine.make_engine(settings.database_url)
    try:
        store_engine.upgrade(engine, revision)
        click.echo(f"schema at revision {store_engine.current_revision(engine)}")
    finally:
        engine.dispose()


@main.group()
def traces() -> None:
    """Stored RAG records."""


@traces.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON array.")
@click.option("--limit", default=50, show_default=True, help="Most recent records to show.")
def traces_list(as_json: bool, limit: int) -> None:
    """List stored records, newest first, with their evaluations."""
    settings = _settings()
    judge_name = runtime.make_judge(settings).name
    with runtime.open_store(settings) as sessions, sessions() as session:
        stored = repo.list_records(session, limit=limit)
    rows = [record_json(s, judge_name) for s in stored]
    if as_json:
        click.echo(json.dumps(rows, indent=2, ensure_ascii=False))
        return
    for row in rows:
        score_text = "-" if row["faithfulness"] is None else f"{row['faithfulness']:.2f}"
        labels = ",".join(f"{k}={v}" for k, v in sorted(row["labels"].items()))
        click.echo(
            f"{row['trace_id']}  {row['status']:<11} {score_text:>5}  {labels}  "
            f"{row['question'][:60]}"
        )


@main.group()
def alerts() -> None:
    """Drift alerts."""


@alerts.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON array.")
@click.option("--open", "only_open", is_flag=True, help="Leave out resolved alerts.")
def alerts_list(as_json: bool, only_open: bool) -> None:
    """List alerts, oldest first."""
    from .alerts import describe

    settings = _settings()
    with runtime.open_store(settings) as sessions, sessions() as session:
        found = repo.list_alerts(session, include_resolved=not only_open)
    if as_json:
        click.echo(json.dumps([to_json(a) for a in found], indent=2, ensure_ascii=False))
        return
    for alert in found:
        click.echo(f"#{alert.id} {alert.opened_at:%Y-%m-%d %H:%M:%S} {describe(alert)}")


@alerts.command("show")
@click.argument("alert_id", type=int)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def alerts_show(alert_id: int, as_json: bool) -> None:
    """One alert with everything it carries: rates, change point, example claims."""
    from .alerts import describe

    settings = _settings()
    with runtime.open_store(settings) as sessions, sessions() as session:
        alert = repo.get_alert(session, alert_id)
    if alert is None:
        raise click.ClickException(f"no alert #{alert_id}")
    if as_json:
        click.echo(json.dumps(to_json(alert), indent=2, ensure_ascii=False))
        return
    click.echo(f"#{alert.id} {describe(alert)}")
    click.echo(f"  opened {alert.opened_at.isoformat()}, updated {alert.updated_at.isoformat()}")
    for key, value in alert.details.items():
        if key != "examples":
            click.echo(f"  {key}: {value}")
    for example in alert.details.get("examples", []):
        click.echo(f"  trace {example['trace_id']}: {'; '.join(example['unsupported_claims'])}")


@alerts.command("ack")
@click.argument("alert_id", type=int)
@click.option("--by", default="", help="Who acknowledges it (default: $USER).")
def alerts_ack(alert_id: int, by: str) -> None:
    """Acknowledge an alert (recorded on it; the detector still decides its state)."""
    import getpass

    settings = _settings()
    who = by or getpass.getuser()
    with runtime.open_store(settings) as sessions, sessions.begin() as session:
        alert = repo.ack_alert(session, alert_id, who, datetime.now(UTC))
    if alert is None:
        raise click.ClickException(f"no alert #{alert_id}")
    click.echo(f"#{alert_id} acknowledged by {who}")


def _register() -> None:
    # The drift commands live in their own module; it imports this one's helpers.
    from .cli_drift import drift_group

    main.add_command(drift_group)


_register()
