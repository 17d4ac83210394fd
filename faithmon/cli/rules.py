"""`faithmon rules check`: the alert rules file checked as the worker checks it at start."""

from __future__ import annotations

import json
import os

import click

from ..alerts.rules import read_rules
from ._common import json_option, load_settings


@click.group()
def rules() -> None:
    """Alert rules as code: sinks, routes and per-kind rules in a TOML file."""


@rules.command("check")
@click.argument("file", required=False, type=click.Path(dir_okay=False))
@json_option
def rules_check(file: str | None, as_json: bool) -> None:
    """Check FILE (default: FAITHMON_ALERT_RULES): every unknown key, bad matcher or
    duration, missing sink, inline or unset secret and broken template, one line each;
    exit status 1 when there is any."""
    settings = load_settings()
    path = file or settings.alert_rules
    if not path:
        raise click.UsageError("give FILE or set FAITHMON_ALERT_RULES")
    found, problems = read_rules(path, os.environ, settings.alert_allow_link_local)
    counts = {"sinks": len(found.sinks), "routes": len(found.routes), "kinds": len(found.kinds)}
    if as_json:
        click.echo(json.dumps({"file": path, "ok": not problems, "problems": problems, **counts}))
    elif problems:
        for line in problems:
            click.echo(line, err=True)
    else:
        click.echo(
            f"{path}: ok ({counts['sinks']} sinks, {counts['routes']} routes,"
            f" {counts['kinds']} rule kinds)"
        )
    if problems:
        raise SystemExit(1)
