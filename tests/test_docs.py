"""The README and --help stay true to the code."""

from __future__ import annotations

from pathlib import Path

import click

from faithmon.cli import main
from faithmon.config import SETTINGS

ROOT = Path(__file__).resolve().parents[1]


def _commands(group: click.Group, prefix: str = "") -> list[tuple[str, click.Command]]:
    found = []
    for name, command in group.commands.items():
        found.append((prefix + name, command))
        if isinstance(command, click.Group):
            found.extend(_commands(command, prefix + name + " "))
    return found


def test_every_setting_is_in_the_readme() -> None:
    """Each FAITHMON_* setting appears in the README's configuration table."""
    readme = (ROOT / "README.md").read_text()
    missing = [s.env for s in SETTINGS if f"`{s.env}`" not in readme]
    assert missing == []


def test_every_setting_is_in_the_env_example() -> None:
    """deploy/.env.example names each FAITHMON_* setting with its default."""
    lines = (ROOT / "deploy" / ".env.example").read_text().splitlines()
    assigned = dict(line.split("=", 1) for line in lines if line and not line.startswith("#"))
    assert {s.env: s.default for s in SETTINGS} == assigned


def test_every_command_has_help_and_is_documented() -> None:
    """Each CLI command has help text and is named in the README."""
    readme = (ROOT / "README.md").read_text()
    for name, command in _commands(main):
        assert command.help, f"`faithmon {name}` has no help text"
        assert f"faithmon {name}" in readme, f"`faithmon {name}` is not in the README"
