"""Every command's --help, in one text: the snapshot `test_help.py` compares with.

After changing a command on purpose, write the snapshot again and review its diff:

    .venv/bin/python -m tests.cli.help_snapshot
"""

from __future__ import annotations

from pathlib import Path

import click
from click.testing import CliRunner

from faithmon.cli import main

SNAPSHOT = Path(__file__).with_name("help.txt")


def commands(group: click.Group, path: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    found = [path]
    context = click.Context(group)
    for name in group.list_commands(context):
        command = group.get_command(context, name)
        assert command is not None, name
        if isinstance(command, click.Group):
            found.extend(commands(command, (*path, name)))
        else:
            found.append((*path, name))
    return found


def render() -> str:
    runner = CliRunner()
    parts = []
    for path in commands(main):
        # A fixed width: the snapshot must not depend on the terminal it was made in.
        result = runner.invoke(main, [*path, "--help"], terminal_width=100, prog_name="faithmon")
        assert result.exit_code == 0, result.output
        parts.append(f"$ faithmon {' '.join((*path, '--help'))}\n{result.output}")
    return "\n".join(parts)


if __name__ == "__main__":
    SNAPSHOT.write_text(render())
    print(f"wrote {SNAPSHOT}")
