"""A judge must prove itself on its sentinels before its scores count: through the worker,
`faithmon judge status --json`, and the settings that set the floor (SQLite and PostgreSQL)."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from faithmon.cli import main
from faithmon.config import Settings
from faithmon.drift import sentinels
from faithmon.errors import ConfigError
from faithmon.judge.offline import NAME
from faithmon.model import Chunk, RagRecord
from faithmon.store import alerts as store_alerts
from faithmon.store import drift_runs as store_drift_runs
from faithmon.store import engine as store_engine
from faithmon.store import records as store_records
from faithmon.store import sentinels as store_sentinels
from tests.timing import days_ago

# The dialect is not the point here: PostgreSQL runs in the second_backend tier.
pytestmark = pytest.mark.one_backend

CONTEXT = "Order A17 shipped on 3 March by courier."
BAD = CONTEXT + " It arrives tomorrow."
T0 = days_ago(1)

# Supported cases are the chunk itself, unsupported ones invent; five labels are wrong on
# purpose, so the offline judge "errs" on them: accuracy 0.75, false-flag rate 2/9, miss
# rate 3/11.
FLIPPED = {1: "supported", 3: "supported", 0: "unsupported", 2: "unsupported", 4: "unsupported"}


def _cases() -> list[sentinels.Case]:
    lines = []
    for n in range(20):
        supported = n % 2 == 0
        expected = "supported" if supported else "unsupported"
        lines.append(
            json.dumps(
                {
                    "id": f"c{n}",
                    "question": "Where is A17?",
                    "chunks": [CONTEXT],
                    "answer": CONTEXT if supported else f"Order A17 was refunded {n} times.",
                    "expected": FLIPPED.get(n, expected),
                }
            )
        )
    return sentinels.parse_cases(lines)


def _record(n: int, answer: str, **labels: str) -> RagRecord:
    return RagRecord(
        f"{n + 1:032x}",
        "Where is order A17?",
        answer,
        (Chunk(0, CONTEXT),),
        labels,
        T0 + timedelta(minutes=n),
    )


def _store(monkeypatch: pytest.MonkeyPatch, database_url: str, tmp_path: Path, **env: str) -> None:
    """A store with the sentinel set and traffic on which model m2 drifts."""
    monkeypatch.chdir(tmp_path)  # the worker's heartbeat file
    for name, value in {
        "FAITHMON_DATABASE_URL": database_url,
        "FAITHMON_DRIFT_DIMENSIONS": "route,model",
        "FAITHMON_DRIFT_THRESHOLD": "8",
        "FAITHMON_DRIFT_BASELINE_RECORDS": "50",
        "FAITHMON_DRIFT_BASELINE_DAYS": "0",
        "FAITHMON_DRIFT_SEGMENT_MIN_BASELINE": "10",
        "FAITHMON_SCRUB_KEY": "k" * 32,
        **env,
    }.items():
        monkeypatch.setenv(name, value)
    records = [_record(n, CONTEXT, route=("a", "b")[n % 2], model="m1") for n in range(60)]
    records += [
        _record(60 + n, BAD if n % 2 == 0 else CONTEXT, route=("a", "b")[n % 2 == 0], model="m2")
        for n in range(60)
    ]
    engine = store_engine.make_engine(database_url)
    store_engine.upgrade(engine)
    sessions = store_engine.session_factory(engine)
    cases = _cases()
    with sessions.begin() as session:
        store_sentinels.add_set(session, "orders", sentinels.version(cases), cases)
        store_records.save_records(session, records)
    engine.dispose()


def _read(database_url: str) -> tuple[list[str], bool]:
    """The production alert rules open after the worker, and whether its run was held back."""
    engine = store_engine.make_engine(database_url)
    sessions = store_engine.session_factory(engine)
    with sessions() as session:
        rules = sorted(a.rule for a in store_alerts.list_alerts(session) if "judge" not in a.rule)
        run = store_drift_runs.load(session, NAME)
    engine.dispose()
    assert run is not None and run.baseline_ready
    return rules, run.held_back


def _status(runner: CliRunner) -> dict[str, dict[str, Any]]:
    result = runner.invoke(main, ["judge", "status", "--json"])
    assert result.exit_code == 0, result.output
    status = json.loads(result.stdout)
    assert {"judge", "blocked", "usage"} <= set(status)  # the fields it always had
    return {j["judge"]: j for j in status["judges"]}


def test_unproven_judge_holds_back_drift_alerts(
    database_url: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Below the floor (accuracy 0.75 < 0.85): the worker stores its drift run held back,
    no production alert opens, and `judge status` says unproven with the figures."""
    _store(monkeypatch, database_url, tmp_path)
    runner = CliRunner()
    untested = _status(runner)[NAME]
    assert untested["state"] == "untested" and untested["accuracy"] is None

    worked = runner.invoke(main, ["worker", "--once"])
    assert worked.exit_code == 0, worked.output
    assert "scored 120 records; 0 alert changes" in worked.stdout
    rules, held_back = _read(database_url)
    assert rules == [] and held_back

    standing = _status(runner)[NAME]
    assert standing["state"] == "unproven"
    assert (standing["set"], standing["accuracy"]) == ("orders", 0.75)
    assert (standing["false_flag_rate"], standing["miss_rate"]) == (0.2222, 0.2727)
    assert standing["score_gap"] == pytest.approx(7 / 9 - 3 / 11, abs=1e-3)
    assert standing["ran_at"] is not None
    assert standing["line"] == (
        f"{NAME} is unproven: it cannot separate the orders sentinels, accuracy 0.75, "
        "false-flag rate 0.22, miss rate 0.27; production scores are not interpreted"
    )
    text = runner.invoke(main, ["judge", "status"]).stdout
    assert f"UNPROVEN {standing['line']}" in text


def test_proven_judge_lets_drift_alerts_flow(
    database_url: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The same runs above a lower floor (set by the settings): the judge is proven and
    the drifting model's alert fires."""
    _store(
        monkeypatch,
        database_url,
        tmp_path,
        FAITHMON_SENTINEL_MIN_ACCURACY="0.7",
        FAITHMON_SENTINEL_MAX_ERROR_RATE="0.3",
    )
    runner = CliRunner()
    worked = runner.invoke(main, ["worker", "--once"])
    assert worked.exit_code == 0, worked.output
    rules, held_back = _read(database_url)
    assert "faithfulness_drift" in rules and not held_back
    standing = _status(runner)[NAME]
    assert standing["state"] == "proven" and standing["accuracy"] == 0.75
    assert standing["line"].startswith(f"{NAME} is proven: it separates the orders sentinels")


@pytest.mark.parametrize(
    ("environ", "message"),
    [
        ({"FAITHMON_SENTINEL_MIN_ACCURACY": "1.5"}, "must be between 0.0 and 1.0"),
        ({"FAITHMON_SENTINEL_MAX_ERROR_RATE": "-0.1"}, "must be between 0.0 and 1.0"),
        ({"FAITHMON_SENTINEL_MIN_ACCURACY": "high"}, "could not convert"),
    ],
)
def test_floor_settings_refuse_bad_values(environ: dict[str, str], message: str) -> None:
    """A floor outside 0..1, or not a number, stops with one line naming the setting."""
    with pytest.raises(ConfigError, match=message) as caught:
        Settings.from_env(environ)
    assert str(caught.value).startswith(next(iter(environ)))
    assert "\n" not in str(caught.value)


def test_floor_settings_parse(tmp_path: Path) -> None:
    """Defaults 0.85 and 0.2; set values reach the worker's floor."""
    from faithmon.cli import wiring

    default = wiring.proof_floor(Settings.from_env({}))
    assert (default.min_accuracy, default.max_error_rate) == (0.85, 0.2)
    environ = {"FAITHMON_SENTINEL_MIN_ACCURACY": "0.9", "FAITHMON_SENTINEL_MAX_ERROR_RATE": "0.1"}
    floor = wiring.proof_floor(Settings.from_env(environ))
    assert (floor.min_accuracy, floor.max_error_rate) == (0.9, 0.1)
    shown = CliRunner().invoke(
        main,
        ["judge", "status", "--json"],
        env={
            "FAITHMON_DATABASE_URL": f"sqlite:///{tmp_path}/f.db",
            "FAITHMON_SENTINEL_MIN_ACCURACY": "2",
        },
    )
    assert shown.exit_code != 0
    assert "FAITHMON_SENTINEL_MIN_ACCURACY='2': must be between 0.0 and 1.0" in shown.output
