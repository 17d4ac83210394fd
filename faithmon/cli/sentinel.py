"""`faithmon sentinel add|list|run`: sets of known cases that check the judge."""

from __future__ import annotations

import json
from typing import IO

import click

from ..errors import ConfigError
from . import wiring
from ._common import configure_logging, database_option, json_option, limit_option, load_settings


@click.group()
def sentinel() -> None:
    """Sentinel sets: known cases that check the judge itself for drift."""


@sentinel.command("add")
@click.argument("file", type=click.File("r"))
@click.option("--name", required=True, help="The set's name; its version is its content hash.")
@json_option
@database_option
def sentinel_add(file: IO[str], name: str, as_json: bool) -> None:
    """Load a JSONL set: question, chunks, answer, expected (supported|unsupported)."""
    from ..drift import sentinels
    from ..store import sentinels as store_sentinels

    try:
        cases = sentinels.parse_cases(file)
    except ValueError as exc:
        raise click.ClickException(f"{file.name}: {exc}") from None
    version = sentinels.version(cases)
    settings = load_settings()
    with wiring.open_store(settings) as sessions, sessions.begin() as session:
        added = store_sentinels.add_set(session, name, version, cases)
    state = "added" if added else "already present"
    if as_json:
        shown = {"name": name, "version": version, "cases": len(cases), "added": added}
        click.echo(json.dumps(shown))
        return
    click.echo(f"sentinel set {name} version {version}: {len(cases)} cases, {state}")


@sentinel.command("list")
@json_option
@limit_option(50, "At most this many runs, newest first.")
@database_option
def sentinel_list(as_json: bool, limit: int) -> None:
    """Sentinel sets and their runs (newest first), per judge configuration."""
    from ..store import sentinels as store_sentinels

    settings = load_settings()
    with wiring.open_store(settings, must_exist=True) as sessions, sessions() as session:
        sets = store_sentinels.latest_sets(session)
        runs = store_sentinels.list_runs(session)
    runs = sorted(runs, key=lambda r: str(r["ran_at"]), reverse=True)[:limit]
    if as_json:
        listed = [{"name": n, "version": v, "cases": len(c)} for _, n, v, c in sets]
        click.echo(json.dumps({"sets": listed, "runs": runs}, indent=2))
        return
    if not sets:
        click.echo("no sentinel sets yet: the worker loads the starter set on its first run")
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
@json_option
@database_option
def sentinel_run(name: str | None, as_json: bool) -> None:
    """Run the sentinel sets through the current judge now; say whether they prove it."""
    from .. import jobs
    from ..store import sentinels as store_sentinels

    settings = load_settings()
    configure_logging(settings.log_level)
    try:
        judge_ = wiring.make_judge(settings)
        sinks = wiring.make_sinks(settings)
    except ConfigError as exc:
        raise click.ClickException(str(exc)) from None
    with wiring.open_store(settings, must_exist=True) as sessions:
        if name is not None:
            with sessions() as session:
                known = sorted({n for _, n, _, _ in store_sentinels.latest_sets(session)})
            if name not in known:
                raise click.ClickException(
                    f"no sentinel set named {name!r} (sets: {', '.join(known) or 'none'}); "
                    "load one with `faithmon sentinel add FILE --name NAME`"
                )
        done = jobs.run_sentinels(sessions, judge_, sinks=sinks, name=name)
        with sessions() as session:
            standing = store_sentinels.standing(session, judge_.name, wiring.proof_floor(settings))
    if as_json:
        runs = [
            {
                "set": run.name,
                "version": run.version,
                "accuracy": run.result.accuracy,
                "false_flag_rate": run.result.false_flag_rate,
                "miss_rate": run.result.miss_rate,
                "direction": run.drift.direction,
                "drifting": run.drift.drifting,
            }
            for run in done
        ]
        shown = {"judge": judge_.name, "runs": runs, "standing": standing.as_json()}
        click.echo(json.dumps(shown, indent=2))
        return
    if not done:
        click.echo(
            f"no sentinel set ran for {judge_.name}: it is blocked (`faithmon judge status`)"
        )
    for run in done:
        click.echo(
            f"{run.name} {run.version}: accuracy {run.result.accuracy:.2f}, judge "
            f"{run.drift.direction}{' (drift)' if run.drift.drifting else ''}"
        )
    click.echo(standing.line)
