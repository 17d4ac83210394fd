"""The standing rule: proven, unproven, drifting, blocked or untested (pure, no store)."""

from __future__ import annotations

from datetime import timedelta

from faithmon.model import SentinelResult
from faithmon.model.standing import ProofFloor, SetRun, judge_standing
from tests.timing import days_ago

T0 = days_ago(2)
GOOD = SentinelResult(60, 30, 30, 1, 2, 0, 0.8)
POOR = SentinelResult(60, 30, 30, 4, 20, 0, 0.2)  # accuracy 0.60, misses 0.67
FLOOR = ProofFloor()


def run(result: SentinelResult, name: str = "starter", hours: int = 0) -> SetRun:
    return SetRun(name, "v1", T0 + timedelta(hours=hours), result)


def test_floor_names_what_falls_short() -> None:
    """Accuracy and each error rate are checked on their own; a clean run clears it."""
    assert FLOOR.shortfall(GOOD) is None
    assert FLOOR.shortfall(POOR) == "accuracy 0.60, miss rate 0.67"
    lopsided = SentinelResult(60, 30, 30, 7, 0, 0, 0.7)  # accuracy 0.88, false flags 0.23
    assert FLOOR.shortfall(lopsided) == "false-flag rate 0.23"
    assert FLOOR.shortfall(SentinelResult(5, 0, 0, 0, 0, 5, 0.0)) == "no case judged"


def test_states_and_their_lines() -> None:
    """Each state, in one plain line from the measured figures."""
    untested = judge_standing("j/1", [], FLOOR)
    assert untested.state == "untested" and not untested.held_back and untested.trusts(T0)

    unproven = judge_standing("j/1", [run(POOR)], FLOOR)
    assert unproven.state == "unproven" and unproven.held_back and not unproven.trusts(T0)
    assert unproven.line == (
        "j/1 is unproven: it cannot separate the starter sentinels, accuracy 0.60, "
        "miss rate 0.67; production scores are not interpreted"
    )
    proven = judge_standing("j/1", [run(GOOD)], FLOOR)
    assert proven.state == "proven" and not proven.held_back and proven.trusts(T0)
    assert proven.as_json()["accuracy"] == 0.95

    # One set short is enough to be unproven; it decides the figures.
    mixed = judge_standing("j/1", [run(GOOD, "a"), run(POOR, "b", 1)], FLOOR)
    assert mixed.state == "unproven" and mixed.as_json()["set"] == "b"
    assert [s["set"] for s in mixed.as_json()["sets"]] == ["a", "b"]

    blocked = judge_standing("j/1", [run(POOR)], FLOOR, blocked="401 Unauthorized")
    assert blocked.state == "blocked" and blocked.held_back


def test_drifting_needs_a_proof_first() -> None:
    """A proven judge that lost trust is drifting (scores in the window untrusted); one
    never proven stays unproven."""
    window = (T0 + timedelta(hours=1), None, "sentinel starter: judge stricter")
    drifting = judge_standing("j/1", [run(POOR, hours=2)], FLOOR, True, window)
    assert drifting.state == "drifting" and drifting.held_back
    assert drifting.trusts(T0) is False  # unproven on its latest run: nothing is believed
    slid = judge_standing("j/1", [run(GOOD, hours=2)], FLOOR, True, window)
    assert slid.state == "drifting" and slid.trusts(T0) and not slid.trusts(T0 + timedelta(hours=1))
    never = judge_standing("j/1", [run(POOR, hours=2)], FLOOR, False, window)
    assert never.state == "unproven"
    closed = (window[0], T0 + timedelta(hours=3), window[2])
    again = judge_standing("j/1", [run(GOOD, hours=3)], FLOOR, True, closed)
    assert again.state == "proven" and again.trusts(T0 + timedelta(hours=4))
