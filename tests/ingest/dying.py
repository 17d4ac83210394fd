"""Scrubbers that take their worker process down, for the tests of worker processes.

They live apart from the tests so a spawned worker, which imports the module that
defines what it runs, imports this and not the test module's receiver and API.
"""

from __future__ import annotations

import os
from pathlib import Path

from faithmon.model import RagRecord


class DiesOnce:
    """A scrubber whose worker process dies the first time it runs (a marker file says
    it has): as a worker killed mid-batch would."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __call__(self, record: RagRecord) -> RagRecord:
        if not self.marker.exists():
            self.marker.write_text("died")
            os._exit(1)
        return record


class DiesOn:
    """A scrubber whose worker process dies on every record asking ``question``."""

    def __init__(self, question: str) -> None:
        self.question = question

    def __call__(self, record: RagRecord) -> RagRecord:
        if record.question == self.question:
            os._exit(1)
        return record
