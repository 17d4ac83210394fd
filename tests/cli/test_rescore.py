"""`faithmon rescore` reads its window as `traces list` does: ISO-8601, an offset honoured,
none meaning UTC; a time it cannot read is one line."""

from __future__ import annotations

import json
from datetime import timedelta, timezone
from pathlib import Path

import pytest
from click.testing import CliRunner

from faithmon.cli import main
from faithmon.jobs import score_pending
from faithmon.judge import OfflineJudge
from faithmon.model import Chunk, RagRecord
from faithmon.store import engine as store_engine
from faithmon.store import records as store_records
from tests.timing import days_ago

pytestmark = pytest.mark.one_backend

T0 = days_ago(1)


@pytest.fixture
def store(database_url: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> str:
    """Four records a minute apart, scored by another configuration than the current."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("FAITHMON_DATABASE_URL", database_url)
    engine = store_engine.make_engine(database_url)
    try:
        store_engine.upgrade(engine)
        sessions = store_engine.session_factory(engine)
        made = [
            RagRecord(
                trace_id=f"{n + 1:032x}",
                question="Where is order A17?",
                answer="Order A17 shipped on 3 March.",
                chunks=(Chunk(0, "Order A17 shipped on 3 March."),),
                labels={"model": "m1"},
                started_at=T0 + timedelta(minutes=n),
            )
            for n in range(4)
        ]
        with sessions.begin() as session:
            store_records.save_records(session, made)
        assert score_pending(sessions, OfflineJudge(threshold=0.0)) == 4
    finally:
        engine.dispose()
    return database_url


def test_rescore_takes_iso_times_with_an_offset(store: str) -> None:
    """Since T0 + 2 min written at +02:00, until T0 + 3 min without an offset (UTC): the
    third record; since that time alone: the fourth (the third is queued already)."""
    since = (T0 + timedelta(minutes=2)).astimezone(timezone(timedelta(hours=2))).isoformat()
    assert since.endswith("+02:00")
    until = (T0 + timedelta(minutes=3)).replace(tzinfo=None).isoformat()
    one = CliRunner().invoke(main, ["rescore", "--since", since, "--until", until, "--json"])
    assert one.exit_code == 0, one.output
    assert json.loads(one.stdout)["queued"] == 1
    two = CliRunner().invoke(main, ["rescore", "--since", since])
    assert two.exit_code == 0, two.output
    assert two.stdout.startswith("queued 1 record for offline/")


def test_a_time_rescore_cannot_read_is_one_line(store: str) -> None:
    """A time that is not ISO-8601 is one usage line, exit 2."""
    result = CliRunner().invoke(main, ["rescore", "--since", "yesterday"])
    assert result.exit_code == 2
    (line,) = result.output.strip().splitlines()
    assert line.startswith("Error: Invalid value for '--since': 'yesterday': not an ISO-8601")
