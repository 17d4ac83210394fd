"""The command line: the composition root, one module per command group.

``run.py`` has the process commands (demo, report, serve, worker, rescore); the
groups each have their own module. ``main`` is the ``faithmon`` entry point.
"""

from __future__ import annotations

import click

from .. import __version__
from . import alerts, db, drift, judge, keys, run, sample, sentinel, traces


@click.group()
@click.version_option(__version__, prog_name="faithmon")
def main() -> None:
    """faithmon: monitor the faithfulness of a RAG app's answers in production."""


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
    drift.drift_group,
    keys.keys,
):
    main.add_command(command)

__all__ = ["main"]
