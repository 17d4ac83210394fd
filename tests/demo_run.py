"""The session's one run of ``faithmon demo`` (see the demo_run fixture in conftest)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class DemoRun:
    """What one ``faithmon demo`` (1,000 requests, SQLite) printed and wrote."""

    stdout: str
    database: Path
    report: Path
