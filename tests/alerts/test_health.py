"""Signals about faithmon's own health: a judge failing too often, a receiver that stopped
saving; each its own kind, never a faithfulness reading."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta
from typing import Any

from faithmon.alerts.health import judge_error_signal, receiver_signals
from faithmon.alerts.lifecycle import describe
from faithmon.model import Alert
from faithmon.model.health import ReceiverStatus
from tests.timing import days_ago

NOW = days_ago(0, hour=0) - timedelta(hours=1)
STALE = timedelta(minutes=2)


def outcomes(errors: int, ok: int) -> list[tuple[str, str | None]]:
    return [("judge_error", "HTTP 500")] * errors + [("ok", None)] * ok


def test_judge_error_fires_above_the_bound_with_enough_evaluations() -> None:
    """Above the bound with the minimum count: firing, with the commonest causes."""
    signal = judge_error_signal("llm/gpt", outcomes(6, 14), bound=0.2, minimum=20)
    assert signal.level == "firing" and signal.rule == "judge_error"
    assert signal.segment == {"judge": "llm/gpt", "cause": "error_rate"}
    assert signal.details["error_rate"] == 0.3
    assert signal.details["top_errors"] == [{"error": "HTTP 500", "count": 6}]


def test_judge_error_stays_ok_at_the_bound_or_with_too_few() -> None:
    """Exactly at the bound, or above it with fewer than the minimum: ok."""
    assert judge_error_signal("j", outcomes(4, 16), 0.2, 20).level == "ok"
    assert judge_error_signal("j", outcomes(5, 5), 0.2, 20).level == "ok"
    assert judge_error_signal("j", [], 0.2, 20).level == "ok"


def status(**changes: Any) -> ReceiverStatus:
    base = ReceiverStatus("host:4318", NOW - timedelta(hours=1), NOW - timedelta(seconds=5))
    return replace(base, **changes)


def test_a_silent_receiver_fires_and_a_stopped_one_does_not() -> None:
    """No heartbeat for the stale bound fires; a clean stop is no failure."""
    silent = status(beat_at=NOW - timedelta(minutes=3))
    stopped = status(name="other:4318", beat_at=NOW - timedelta(hours=1), stopped_at=NOW)
    fresh = status(name="fresh:4318")
    levels = {
        s.segment["receiver"]: s for s in receiver_signals([silent, stopped, fresh], [], NOW, STALE)
    }
    assert levels["host:4318"].level == "firing"
    assert levels["host:4318"].details["cause"] == "silent"
    assert levels["other:4318"].level == "ok" and levels["fresh:4318"].level == "ok"


def test_saves_failing_past_the_bound_fire_with_their_kind() -> None:
    """A beating receiver whose saves keep failing fires; a shorter failure does not."""
    long = status(
        failing_since=NOW - timedelta(minutes=5), last_error="StoreUnavailable", backlog=7
    )
    short = status(failing_since=NOW - timedelta(seconds=30))
    (fired,) = receiver_signals([long], [], NOW, STALE)
    assert fired.level == "firing" and fired.details["cause"] == "saving_fails"
    assert fired.details["error"] == "StoreUnavailable" and fired.details["backlog"] == 7
    assert receiver_signals([short], [], NOW, STALE)[0].level == "ok"
    alert = Alert(
        "ingest_error", fired.segment, "firing", "critical", NOW, NOW, details=fired.details
    )
    assert "saving has failed since" in describe(alert) and "7 records wait" in describe(alert)


def test_the_alert_of_a_forgotten_receiver_resolves() -> None:
    """An open ingest_error whose receiver row is gone gets an ok signal."""
    alert = Alert("ingest_error", {"receiver": "gone:4318"}, "firing", "critical", NOW, NOW, id=3)
    (signal,) = receiver_signals([], [alert], NOW, STALE)
    assert signal.level == "ok" and signal.segment == {"receiver": "gone:4318"}
