"""A renamed flag or a changed default is a visible change: every --help is kept as text."""

from __future__ import annotations

import difflib

from tests.cli.help_snapshot import SNAPSHOT, render


def test_every_help_matches_the_snapshot() -> None:
    now = render()
    kept = SNAPSHOT.read_text()
    diff = "".join(
        difflib.unified_diff(
            kept.splitlines(keepends=True), now.splitlines(keepends=True), "help.txt", "now"
        )
    )
    assert not diff, (
        "a command's --help changed; if on purpose, run "
        "`.venv/bin/python -m tests.cli.help_snapshot` and commit help.txt\n" + diff
    )
