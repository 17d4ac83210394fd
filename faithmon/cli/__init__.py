"""The command line: the composition root, one module per command group.

``run.py`` has the process commands (demo, report, serve, worker, rescore); the
groups each have their own module. ``main`` is the ``faithmon`` entry point.
"""

from __future__ import annotations

import click

from .. import __version__
from . import (
    alerts,
    db,
    drift,
    judge,
    keys,
    review,
    rules,
    run,
    sample,
    sentinel,
    silence,
    traces,
)
from ._common import STRICT, VERBOSE, Main, configure_logging


@click.group(cls=Main)
@click.version_option(__version__, prog_name="faithmon")
@click.option("--verbose", "-v", is_flag=True, help="Show migrations run and full tracebacks.")
@click.option(
    "--strict",
    is_flag=True,
    help="Refuse unknown FAITHMON_* names (as FAITHMON_STRICT=1 does) instead of warning.",
)
@click.pass_context
def main(ctx: click.Context, verbose: bool, strict: bool) -> None:
    """faithmon: monitor the faithfulness of a RAG app's answers in production."""
    ctx.meta[VERBOSE] = verbose
    ctx.meta[STRICT] = strict
    if verbose:
        # Commands that set no logging of their own then show INFO lines too (migrations).
        configure_logging("INFO")


for command in (
    run.demo,
    run.report,
    run.serve,
    run.worker,
    run.rescore,
    sentinel.sentinel,
    judge.judge,
    judge.score,
    sample.sample,
    db.db,
    traces.traces,
    alerts.alerts,
    silence.silence,
    drift.drift_group,
    keys.keys,
    rules.rules,
    review.review,
):
    main.add_command(command)

__all__ = ["main"]
