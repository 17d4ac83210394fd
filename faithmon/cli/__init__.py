"""The command line: the composition root, one module per command group.

``run.py`` has the process commands (demo, report, serve, worker, rescore); the
groups each have their own module. ``main`` is the ``faithmon`` entry point. A
command's module is imported when the command is asked for: `faithmon serve` does not
load what `faithmon review` needs, and each process starts sooner.
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


class _Lazy(Main):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in COMMANDS:
            module, attribute = COMMANDS[cmd_name]
            loaded = getattr(importlib.import_module(f"{__name__}.{module}"), attribute)
            self.add_command(loaded, cmd_name)
        return self.commands.get(cmd_name)


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
