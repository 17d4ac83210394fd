"""`faithmon demo --seed` repeats a run: the same traffic with the same trace ids, so the
sampler keeps and the review queue picks the same traces (both decide by trace id)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from faithmon.cli import main


def _queued(tmp_path: Path, name: str, seed: int) -> list[str]:
    database = tmp_path / f"{name}.db"
    report = tmp_path / f"{name}.html"
    args = ["demo", "--requests", "80", "--seed", str(seed), "--database", str(database)]
    ran = CliRunner().invoke(main, [*args, "-o", str(report)])
    assert ran.exit_code == 0, ran.output
    url = f"sqlite:///{database}"
    queue = CliRunner().invoke(
        main, ["review", "queue", "--json", "--limit", "500", "--database-url", url]
    )
    assert queue.exit_code == 0, queue.output
    return sorted(item["trace_id"] for item in json.loads(queue.stdout))


def test_a_seed_repeats_the_review_pick(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two runs of seed 5 queue the same traces for review (with the tracer's own random
    ids, the picks would differ run to run)."""
    monkeypatch.chdir(tmp_path)
    first = _queued(tmp_path, "first", 5)
    assert first, "the demo queued nothing for review"
    assert _queued(tmp_path, "again", 5) == first
