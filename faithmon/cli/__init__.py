"""The command line: the composition root, one module per command group.

``run.py`` has the process commands (demo, report, serve, worker, rescore); the
groups each have their own module. ``main`` is the ``faithmon`` entry point. A
command's module is imported when the command is asked for: `faithmon serve` does not
load what `faithmon review` needs, and each process starts sooner. `faithmon --help`
imports none of them: it lists each command with its summary from ``SUMMARIES``.
"""

from __future__ import annotations

import importlib

import click

from .. import __version__
from ._common import STRICT, VERBOSE, Main, configure_logging, data_dir_option

# name → (module of faithmon.cli, attribute).
COMMANDS = {
    "demo": ("run", "demo"),
    "report": ("run", "report"),
    "serve": ("run", "serve"),
    "worker": ("run", "worker"),
    "rescore": ("run", "rescore"),
    "sentinel": ("sentinel", "sentinel"),
    "judge": ("judge", "judge"),
    "score": ("judge", "score"),
    "gate": ("gate", "gate"),
    "sample": ("sample", "sample"),
    "db": ("db", "db"),
    "traces": ("traces", "traces"),
    "alerts": ("alerts", "alerts"),
    "silence": ("silence", "silence"),
    "drift": ("drift", "drift_group"),
    "keys": ("keys", "keys"),
    "rules": ("rules", "rules"),
    "review": ("review", "review"),
}

# name → the first line of the command's help, which `faithmon --help` lists. The command
# modules import the store and the judges (over a second): the listing must not wait on
# them. tests/cli/test_startup.py holds each line to the command's own help.
SUMMARIES = {
    "alerts": "Drift alerts.",
    "db": "Database schema commands.",
    "demo": "Run the whole loop on a sample RAG app: ingest, score, detect drift, alert.",
    "drift": "Production drift detectors per segment.",
    "gate": "Hold a JSONL file of cases to faithfulness rules: a release gate for CI.",
    "judge": "Judge configurations: standing, blocks and usage.",
    "keys": "API keys (scopes: ingest, read, review, admin).",
    "report": "Write a self-contained HTML report: rates over time per segment, alerts, examples.",
    "rescore": "Queue a window for scoring again by the current judge; earlier evaluations stay.",
    "review": "The review loop: label claims, measure the judge, calibrate thresholds.",
    "rules": "Alert rules as code: sinks, routes and per-kind rules in a TOML file.",
    "sample": "Sampling decisions and counts.",
    "score": "Score a JSONL file of {user_input, response, retrieved_contexts}; no database.",
    "sentinel": "Sentinel sets: known cases that check the judge itself for drift.",
    "serve": "Receive OTLP traces and logs (HTTP and gRPC) and store RAG records.",
    "silence": "Silences: label matchers over a time range that stop alert notifications.",
    "traces": "Stored RAG records.",
    "worker": "Score pending records, detect drift and apply retention on a schedule.",
}


class _Lazy(Main):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in COMMANDS:
            module, attribute = COMMANDS[cmd_name]
            loaded = getattr(importlib.import_module(f"{__name__}.{module}"), attribute)
            self.add_command(loaded, cmd_name)
        return self.commands.get(cmd_name)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        names = self.list_commands(ctx)
        limit = formatter.width - 6 - max(len(name) for name in names)
        rows = []
        for name in names:
            summary = SUMMARIES.get(name)
            # A command without a summary yet is loaded to read its own help.
            shown = (
                self.get_command(ctx, name)
                if summary is None
                else click.Command(name, help=summary)
            )
            if shown is not None and not shown.hidden:
                rows.append((name, shown.get_short_help_str(limit)))
        with formatter.section("Commands"):
            formatter.write_dl(rows)


@click.group(cls=_Lazy)
@click.version_option(__version__, prog_name="faithmon")
@click.option("--verbose", "-v", is_flag=True, help="Show migrations run and full tracebacks.")
@click.option(
    "--strict",
    is_flag=True,
    help="Refuse unknown FAITHMON_* names (as FAITHMON_STRICT=1 does) instead of warning.",
)
@data_dir_option
@click.pass_context
def main(ctx: click.Context, verbose: bool, strict: bool) -> None:
    """faithmon: monitor the faithfulness of a RAG app's answers in production."""
    ctx.meta[VERBOSE] = verbose
    ctx.meta[STRICT] = strict
    if verbose:
        # Commands that set no logging of their own then show INFO lines too (migrations).
        configure_logging("INFO")


__all__ = ["main"]
