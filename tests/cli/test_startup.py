"""`faithmon --help` and `--version` start without the store, the judges or the settings
(bench/cli_startup.py times them), and the summaries `--help` lists are each command's own."""

from __future__ import annotations

import subprocess
import sys

import click
import pytest

from faithmon.cli import COMMANDS, SUMMARIES, main

HEAVY = ("sqlalchemy", "alembic", "faithmon.store", "faithmon.judge", "faithmon.config")


@pytest.mark.parametrize("flag", ["--help", "--version"])
def test_help_and_version_import_nothing_heavy(flag: str) -> None:
    """A fresh `python -X importtime -m faithmon FLAG` imports none of ``HEAVY``."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "faithmon", flag],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    imported = {line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines()}
    assert "click" in imported and "faithmon.cli" in imported  # the trace is read right
    heavy = sorted(m for m in imported if m.startswith(HEAVY))
    assert heavy == [], f"`faithmon {flag}` imports {heavy[:5]}"
    assert ("  review " if flag == "--help" else "faithmon, version") in done.stdout


def test_each_summary_is_the_first_line_of_its_commands_help() -> None:
    """Every command has a summary, and it says what the command's own help says first."""
    assert sorted(SUMMARIES) == sorted(COMMANDS)
    context = click.Context(main)
    for name, summary in SUMMARIES.items():
        command = main.get_command(context, name)
        assert command is not None
        listed = click.Command(name, help=summary).get_short_help_str(1000)
        assert listed == command.get_short_help_str(1000), name
