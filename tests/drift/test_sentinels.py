"""Sentinel sets catch a drifting judge, distrust its evaluations and hold back alerts."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import timedelta
from pathlib import Path

import pytest
from click.testing import CliRunner
from sqlalchemy.orm import Session, sessionmaker

from faithmon import drift
from faithmon.cli import main
from faithmon.drift import sentinels
from faithmon.jobs import check_drift, run_sentinels, score_pending
from faithmon.judge import OfflineJudge
from faithmon.model import Chunk, Claim, Judgement, RagRecord
from faithmon.store import alerts as store_alerts
from faithmon.store import records as store_records
from faithmon.store import sentinels as store_sentinels
from tests.timing import days_ago

CONTEXT = "Order A17 shipped on 3 March by courier."


def sentinel_lines(count: int = 20) -> list[str]:
    lines = []
    for n in range(count):
        supported = n % 2 == 0
        answer = CONTEXT if supported else f"Order A17 was refunded {n} times by drone."
        lines.append(
            json.dumps(
                {
                    "id": f"c{n}",
                    "question": "Where is A17?",
                    "chunks": [CONTEXT],
                    "answer": answer,
                    "expected": "supported" if supported else "unsupported",
                }
            )
        )
    return lines


class LenientJudge:
    """A judge configuration gone wrong: it calls every sentence supported."""

    name = "lenient/v1"

    def judge(self, question: str, chunks: Sequence[str], answer: str) -> Judgement:
        return Judgement(
            judge=self.name,
            status="ok",
            claims=(Claim(answer, "supported", 0, chunks[0] if chunks else None),),
        )


def test_cases_parse_and_version_by_content() -> None:
    """A set's version changes with its content; a bad line is a clear error."""
    cases = sentinels.parse_cases(sentinel_lines())
    assert len(cases) == 20 and cases[1].expected == "unsupported"
    assert sentinels.version(cases) == sentinels.version(sentinels.parse_cases(sentinel_lines()))
    assert sentinels.version(cases) != sentinels.version(cases[:-1])
    with pytest.raises(ValueError, match="line 1: expected must be supported or unsupported"):
        sentinels.parse_cases(['{"chunks": [], "answer": "a", "expected": "maybe"}'])


def test_judge_drift_statistics() -> None:
    """A steady judge stays steady; a burst of misses trips the wire, direction lenient."""
    good = sentinels.RunResult(50, 25, 25, 1, 1, 0, 0.9)
    config = sentinels.JudgeDriftConfig()
    assert not sentinels.judge_drift([good, good, good], config).drifting
    worse = sentinels.RunResult(50, 25, 25, 1, 9, 0, 0.4)
    state = sentinels.judge_drift([good, worse], config)
    assert state.drifting and state.tripwire and state.direction == "more lenient"
    stricter = sentinels.RunResult(50, 25, 25, 9, 1, 0, 0.4)
    assert sentinels.judge_drift([good, stricter], config).direction == "stricter"
    slide = sentinels.RunResult(50, 25, 25, 4, 3, 0, 0.7)
    early = sentinels.judge_drift([good, slide], config)
    assert not early.drifting and not early.tripwire
    late = sentinels.judge_drift([good, slide, slide], config)
    assert late.drifting and not late.tripwire and late.statistic >= config.threshold
    assert not sentinels.judge_drift([good, worse, good], config).drifting


def test_drifting_judge_is_distrusted_and_alerts_are_held_back(
    sessions: sessionmaker[Session], tmp_path: Path
) -> None:
    """A judge that turns lenient: judge_drift fires, production drift waits for trust."""
    cases = sentinels.parse_cases(sentinel_lines())
    with sessions.begin() as session:
        store_sentinels.add_set(session, "orders", sentinels.version(cases), cases)
    [first] = run_sentinels(sessions, OfflineJudge())
    assert first.result.accuracy == 1.0 and not first.drift.drifting

    # The "same" configuration (same fingerprint) starts answering leniently.
    lenient = LenientJudge()
    lenient.name = OfflineJudge().name  # type: ignore[misc]
    [second] = run_sentinels(sessions, lenient)
    assert second.drift.drifting and second.drift.direction == "more lenient"
    assert second.result.miss_rate == 1.0
    with sessions() as session:
        alerts = store_alerts.list_alerts(session)
        window = store_sentinels.trust_window(session, OfflineJudge().name)
    assert [(a.rule, a.state, a.details["direction"]) for a in alerts] == [
        ("judge_drift", "firing", "more lenient")
    ]
    assert window is not None and window[1] is None

    # Production traffic that would fire a drift alert is held back meanwhile.
    # Recent: this drift run is on the real clock.
    t0 = days_ago(1)
    bad = CONTEXT + " It arrives tomorrow."
    records = [
        RagRecord(
            f"{n + 1:032x}",
            "q",
            CONTEXT if n < 40 else bad,
            (Chunk(0, CONTEXT),),
            {"route": "a"},
            t0 + timedelta(minutes=n),
        )
        for n in range(80)
    ]
    with sessions.begin() as session:
        store_records.save_records(session, records)
    score_pending(sessions, OfflineJudge())
    config = drift.DriftConfig(
        dimensions=("route",),
        threshold=5,
        baseline_records=30,
        baseline_days=0,
        segment_min_baseline=5,
    )
    held = check_drift(sessions, OfflineJudge().name, config)
    assert held.changed == ()

    # A good run trusts the judge again and resolves the judge alert.
    [third] = run_sentinels(sessions, OfflineJudge())
    assert not third.drift.drifting
    with sessions() as session:
        states = {a.rule: a.state for a in store_alerts.list_alerts(session)}
    assert states["judge_drift"] == "resolved"


def test_sentinel_commands(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`faithmon sentinel add|run|list` load a set, run it and show the run."""
    monkeypatch.setenv("FAITHMON_DATABASE_URL", f"sqlite:///{tmp_path}/s.db")
    path = tmp_path / "orders.jsonl"
    path.write_text("\n".join(sentinel_lines()) + "\n")
    runner = CliRunner()
    added = runner.invoke(main, ["sentinel", "add", str(path), "--name", "orders"])
    assert added.exit_code == 0 and "20 cases, added" in added.stdout
    again = runner.invoke(main, ["sentinel", "add", str(path), "--name", "orders"])
    assert "already present" in again.stdout
    ran = runner.invoke(main, ["sentinel", "run"])
    assert ran.exit_code == 0 and "accuracy 1.00, judge steady" in ran.stdout
    listed = json.loads(runner.invoke(main, ["sentinel", "list", "--json"]).stdout)
    assert listed["sets"][0]["cases"] == 20 and listed["runs"][0]["state"] == "good"
