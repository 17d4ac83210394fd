"""The README, docs/ and --help stay true to the code."""

from __future__ import annotations

import re
from pathlib import Path

import click

from faithmon.cli import main
from faithmon.config import SETTINGS

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"\]\(([^)\s]+)\)")


def _commands(group: click.Group, prefix: str = "") -> list[tuple[str, click.Command]]:
    found = []
    for name, command in group.commands.items():
        found.append((prefix + name, command))
        if isinstance(command, click.Group):
            found.extend(_commands(command, prefix + name + " "))
    return found


def _anchors(page: Path) -> set[str]:
    # GitHub's heading ids: lower case, punctuation dropped, spaces to hyphens.
    lines = page.read_text().splitlines()
    headings = [line.lstrip("#").strip().lower() for line in lines if line.startswith("#")]
    return {re.sub(r"[^\w\- ]", "", heading).replace(" ", "-") for heading in headings}


def test_every_setting_is_in_the_configuration_table() -> None:
    """docs/configuration.md's table has one row per FAITHMON_* setting, with its default."""
    lines = (ROOT / "docs" / "configuration.md").read_text().splitlines()
    cells = [line.split("|") for line in lines if line.startswith("| `FAITHMON_")]
    rows = {cell[1].strip(): cell[2].strip() for cell in cells}
    assert len(rows) == len(cells), "a setting has two rows"
    expected = {f"`{s.env}`": f"`{s.default}`" if s.default else "unset" for s in SETTINGS}
    assert rows == expected


def test_every_setting_is_in_the_env_example() -> None:
    """deploy/.env.example names each FAITHMON_* setting with its default."""
    lines = (ROOT / "deploy" / ".env.example").read_text().splitlines()
    assigned = dict(line.split("=", 1) for line in lines if line and not line.startswith("#"))
    assert {s.env: s.default for s in SETTINGS} == assigned


def test_every_command_has_help_and_is_documented() -> None:
    """Each CLI command has help text and is named in the README or a page of docs/."""
    text = "\n".join(page.read_text() for page in PAGES)
    for name, command in _commands(main):
        assert command.help, f"`faithmon {name}` has no help text"
        assert f"faithmon {name}" in text, f"`faithmon {name}` is not in README.md or docs/"


def test_links_stay_in_the_repository() -> None:
    """Every relative link of the README and docs/ names a file (and heading) in the
    repository, so a fresh clone has all it points to."""
    broken = []
    for page in PAGES:
        for target in LINK.findall(page.read_text()):
            if target.startswith(("http://", "https://", "mailto:")):
                continue
            path, _, anchor = target.partition("#")
            linked = (page.parent / path).resolve() if path else page
            inside = linked.is_relative_to(ROOT) and linked.exists()
            if not inside or (anchor and linked.suffix == ".md" and anchor not in _anchors(linked)):
                broken.append(f"{page.relative_to(ROOT)}: {target}")
        assert "../shared" not in page.read_text(), f"{page.name} names a path outside the repo"
    assert broken == []
