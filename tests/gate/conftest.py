"""Fixtures of the gate's tests: a cases file writer and `faithmon gate` run in-process."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from faithmon.cli import main


@pytest.fixture
def write_cases(tmp_path: Path) -> Callable[..., Path]:
    """Writes case lines to a JSONL file (``cases.jsonl`` unless named); returns its path."""

    def write(*lines: dict[str, Any], name: str = "cases.jsonl") -> Path:
        path = tmp_path / name
        path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
        return path

    return write


@pytest.fixture
def gate(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[..., Result]:
    """Runs `faithmon gate ARGS` in the test's folder; returns click's result."""
    monkeypatch.chdir(tmp_path)

    def run(*args: str) -> Result:
        return CliRunner().invoke(main, ["gate", *args])

    return run
