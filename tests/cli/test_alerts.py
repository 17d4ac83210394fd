"""`faithmon alerts list|show|ack`: who acknowledged an alert, and when, in every listing;
an alert's details under names people read, never Python's values."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest
from click.testing import CliRunner

from faithmon.cli import main
from faithmon.model import Alert
from faithmon.store import alerts as store_alerts
from faithmon.store import engine as store_engine

# The dialect is not the point here: PostgreSQL runs in the second_backend tier.
pytestmark = pytest.mark.one_backend

ACKED_LINE = re.compile(r"acknowledged by (.+) at \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC$")


@pytest.fixture
def alert_ids(database_url: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    """Two drift alerts, the first as the worker leaves one that is recovering."""
    monkeypatch.setenv("FAITHMON_DATABASE_URL", database_url)
    at = datetime.now(UTC) - timedelta(hours=1)
    details = {
        "stream": "unsupported",
        "baseline_rate": 0.05,
        "current_rate": 0.4,
        "current_interval": [0.3, 0.51],
        "records": 60,
        "recent_interval": [0.2805, 0.5078],
        "recovered": False,
        "sentinel_status": {"judge": "offline/v10", "trusted": True},
        "last_at": at.isoformat(),
        "examples": [{"trace_id": "a" * 32, "unsupported_claims": ["It costs 40 euros."]}],
    }
    made = [
        Alert("faithfulness_drift", {"route": route}, "firing", "critical", at, at, None, details)
        for route in ("billing", "search")
    ]
    engine = store_engine.make_engine(database_url)
    try:
        with store_engine.session_factory(engine).begin() as session:
            saved = store_alerts.save_alerts(session, made)
        yield [a.id for a in saved if a.id is not None]
    finally:
        engine.dispose()


def run(*args: str) -> str:
    result = CliRunner().invoke(main, ["alerts", *args])
    assert result.exit_code == 0, result.output
    return result.stdout


def test_list_and_show_say_who_acknowledged_and_when(alert_ids: list[int]) -> None:
    first, second = alert_ids
    assert "acknowledged" not in run("list")
    assert run("ack", str(first), "--by", "ann") == f"#{first} acknowledged by ann\n"
    lines = run("list").splitlines()
    # Newest first: the second alert, then the first with its acknowledgement under it.
    assert lines[1].startswith(f"   #{second}") and lines[2].startswith(f"   #{first}")
    found = ACKED_LINE.search(lines[3])
    assert found is not None and found.group(1) == "ann" and len(lines) == 4
    shown = run("show", str(first)).splitlines()
    assert ACKED_LINE.search(shown[2]) and "not acknowledged" in run("show", str(second))
    (listed,) = [a for a in json.loads(run("list", "--json")) if a["id"] == first]
    assert listed["details"]["acked_by"] == "ann"


def test_show_names_the_details_for_people(alert_ids: list[int]) -> None:
    """Plain names and values: a rate in percent, yes or no, a time in UTC."""
    shown = run("show", str(alert_ids[0]))
    assert "recent rate (95%): 28.1%–50.8%" in shown
    assert "recent rate back near the baseline: no" in shown
    assert "judge's sentinel standing: judge=offline/v10, trusted=yes" in shown
    assert re.search(r"last record: \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC", shown)
    assert "False" not in shown and "True" not in shown and "recent_interval" not in shown
    assert f"  trace {'a' * 32}: It costs 40 euros." in shown
