"""The faithmon command line, run in-process with click's runner."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from faithmon.cli import main
from faithmon.judge.offline import NAME
from faithmon.store import engine as store_engine
from tests.demo_run import DemoRun
from tests.openai_server import OpenAIServer, supporting
from tests.servers import serve_in_thread

# The dialect is not the point here: PostgreSQL runs in the second_backend tier.
pytestmark = pytest.mark.one_backend

CONTEXT = "Order A17 shipped on 3 March by courier."
SEED = [
    (CONTEXT, 1.0),
    (CONTEXT + " It arrives tomorrow.", 0.5),
    ("Order A17 was cancelled.", 0.0),
]


def test_score_writes_each_line_back_with_its_verdicts(tmp_path: Path) -> None:
    """`faithmon score` adds faithfulness, status and claims to every input line."""
    source = tmp_path / "in.jsonl"
    source.write_text(
        "".join(
            json.dumps(
                {
                    "user_input": "Where is A17?",
                    "response": answer,
                    "retrieved_contexts": [CONTEXT],
                    "id": i,
                }
            )
            + "\n"
            for i, (answer, _) in enumerate(SEED)
        )
    )
    result = CliRunner().invoke(main, ["score", str(source), "-o", str(tmp_path / "out.jsonl")])
    assert result.exit_code == 0, result.output
    lines = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert [line["faithfulness"] for line in lines] == [score for _, score in SEED]
    assert [line["id"] for line in lines] == [0, 1, 2]
    assert {line["status"] for line in lines} == {"ok"}
    first_claim = lines[1]["claims"][0]
    assert set(first_claim) >= {"text", "verdict", "chunk", "quote"}
    assert first_claim["verdict"] == "supported" and first_claim["chunk"] == 0
    assert first_claim["quote"] in CONTEXT


def test_score_with_the_cascade_judge_shows_each_claims_stage(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`faithmon score --judge cascade` scores through both stages; each claim says which
    decided it, and the line's usage counts the calls made."""
    server = OpenAIServer(supporting)
    source = tmp_path / "in.jsonl"
    answer = CONTEXT + " The parcel left us in early spring."
    source.write_text(
        json.dumps({"user_input": "q", "response": answer, "retrieved_contexts": [CONTEXT]}) + "\n"
    )
    with serve_in_thread(server.app) as url:
        monkeypatch.setenv("FAITHMON_JUDGE_BASE_URL", url + "/v1")
        monkeypatch.setenv("FAITHMON_JUDGE_API_KEY", "test-key")
        result = CliRunner().invoke(main, ["score", "--judge", "cascade", str(source)])
    assert result.exit_code == 0, result.output
    [line] = [json.loads(row) for row in result.stdout.splitlines()]
    assert line["status"] == "ok" and line["judge"].startswith("cascade(offline/")
    stages = [claim["stage"] for claim in line["claims"]]
    assert stages and set(stages) <= {"offline", "llm"}
    # One call when any claim went to the LLM (the offline judge's confidences decide).
    assert line["usage"]["calls"] == len(server.requests) == int("llm" in stages)


def test_score_reports_bad_lines_and_keeps_the_rest(tmp_path: Path) -> None:
    """A broken line is written back as invalid_input, the others are scored, exit is 1."""
    source = tmp_path / "in.jsonl"
    good = {"user_input": "q", "response": "Hello!", "retrieved_contexts": [CONTEXT]}
    source.write_text("{not json\n" + json.dumps(good) + "\n" + json.dumps({"response": 3}) + "\n")
    result = CliRunner().invoke(main, ["score", str(source)])
    assert result.exit_code == 1
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert [line["status"] for line in lines] == ["invalid_input", "no_claims", "invalid_input"]
    assert lines[1]["faithfulness"] is None
    assert "line 3: 'response' must be a string" in result.stderr


def test_score_reads_ragas_older_names_and_counts_what_it_scored(tmp_path: Path) -> None:
    """RAGAS's older names (question, answer, contexts) are scored as the current ones; the
    summary counts the records scored, in the singular for one, and says when none was."""
    source = tmp_path / "in.jsonl"
    old = {"question": "Where is A17?", "answer": CONTEXT, "contexts": [CONTEXT]}
    source.write_text(json.dumps(old) + "\n" + json.dumps({"response": 3}) + "\n")
    result = CliRunner().invoke(main, ["score", str(source)])
    assert result.exit_code == 1
    first = json.loads(result.stdout.splitlines()[0])
    assert (first["status"], first["faithfulness"]) == ("ok", 1.0)
    assert "scored 1 record: mean faithfulness 1.000 strict" in result.stderr
    assert "errors: 1 in the input, 0 of the judge" in result.stderr
    source.write_text(json.dumps({"response": 3}) + "\n")
    none = CliRunner().invoke(main, ["score", str(source)])
    assert none.exit_code == 1
    assert "nothing scored of 1 line; errors: 1 in the input, 0 of the judge" in none.stderr
    assert "scored 0" not in none.stderr


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def demo_output(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """What the demo printed, with FAITHMON_DATABASE_URL naming the database it wrote:
    on SQLite a copy of the session's demo, on PostgreSQL a demo run for the test."""
    if request.param == "sqlite":
        request.getfixturevalue("demo_copy")
        run: DemoRun = request.getfixturevalue("demo_run")
        return run.stdout
    url: str = request.getfixturevalue("postgres_url")
    monkeypatch.chdir(request.getfixturevalue("tmp_path"))
    monkeypatch.setenv("FAITHMON_DATABASE_URL", url)
    result = CliRunner().invoke(main, ["demo", "--database", url])
    assert result.exit_code == 0, result.output
    return result.stdout


def test_demo_alerts_on_the_new_model_only(demo_output: str) -> None:
    """The demo's drifting model version fires, and so does the re-indexed retriever;
    no stable segment does; the broken judge configuration it swaps in raises a
    judge-drift alert."""
    runner = CliRunner()
    tenants = ("acme", "globex", "initech")
    for tenant in tenants:
        assert f"faithfulness_drift [firing] model=northwind-llm-1.1,tenant={tenant}" in (
            demo_output
        )
    production = [
        line
        for line in demo_output.splitlines()
        if line.startswith("FIRING") and "judge_drift" not in line
    ]
    # Its wrong numbers also fire the critical-claim detector, and the wrong chunks it
    # sometimes cites the citation detector, on the same segments: one of each per tenant,
    # since drift runs per tenant partition.
    on_model = [line for line in production if "model=northwind-llm-1.1," in line]
    assert sorted(line.split(" [")[0] for line in on_model) == sorted(
        ["FIRING  critical_drift", "FIRING  faithfulness_drift", "FIRING  citation_drift"]
        * len(tenants)
    )
    # The third story: the new retriever misses on part of the shipping route. Its
    # retrieval detector fires in every tenant, and its unsupported answers are put down
    # to retrieval while the new model's are put down to generation.
    on_retriever = [line for line in production if "retriever_version=kb-2026.12," in line]
    assert sorted(line.split(" [")[0] for line in on_retriever if "retrieval_drift" in line) == [
        "FIRING  retrieval_drift"
    ] * len(tenants)
    assert all("mostly retrieval" in line for line in on_retriever if "faithfulness_drift" in line)
    assert all("mostly generation" in line for line in on_model if "faithfulness_drift" in line)
    assert all("retrieval_drift" not in line for line in production if line not in on_retriever)
    # Two changes at once: a tenant's overall may fire beside them, no stable segment does.
    for line in production:
        assert "northwind-llm-1.0" not in line and "kb-2026.11" not in line, line
        assert "route=" not in line, line
    judge_drift = [line for line in demo_output.splitlines() if line.startswith("FIRING  judge")]
    assert len(judge_drift) == 1 and "judge stricter" in judge_drift[0], judge_drift
    alerts = json.loads(runner.invoke(main, ["alerts", "list", "--json"]).stdout)
    found = {(a["rule"], tuple(sorted(a["segment"].items())), a["state"]) for a in alerts}
    expected = {
        (rule, (("model", "northwind-llm-1.1"), ("tenant", tenant)), "firing")
        for rule in ("critical_drift", "faithfulness_drift", "citation_drift")
        for tenant in tenants
    } | {
        ("retrieval_drift", (("retriever_version", "kb-2026.12"), ("tenant", tenant)), "firing")
        for tenant in tenants
    }
    judge = ("judge_drift", (("judge", f"{NAME} threshold=0"), ("sentinel", "starter")), "firing")
    assert expected | {judge} <= found
    firing = {a for a in found if a[2] == "firing"}
    assert len(firing) == len(production) + 1
    # The configured judge proves itself on the starter sentinels, from the figures the
    # demo measured; the broken one it swaps in is unproven, said in one plain line.
    status = json.loads(runner.invoke(main, ["judge", "status", "--json"]).stdout)
    standings = {j["judge"]: j for j in status["judges"]}
    standing = standings[status["judge"]]
    assert standing["state"] == "proven" and standing["set"] == "starter"
    assert f"accuracy {standing['accuracy']:.0%}, judge steady" in demo_output
    broken = standings[f"{NAME} threshold=0"]
    assert broken["state"] == "unproven" and f"      {broken['line']}\n" in demo_output
    assert "is unproven: it cannot separate the starter sentinels, accuracy" in demo_output
    records = json.loads(
        runner.invoke(main, ["traces", "list", "--json", "--limit", "2000"]).stdout
    )
    assert len(records) == 1000
    assert {r["status"] for r in records} == {"scored", "no_context"}
    text = json.dumps(records)
    assert "jane.doe@example.com" not in text and "+44 20 7946 0958" not in text


def test_db_upgrade_reports_the_revision(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`faithmon db upgrade` creates the schema and names the revision it reached."""
    monkeypatch.setenv("FAITHMON_DATABASE_URL", f"sqlite:///{tmp_path}/x.db")
    result = CliRunner().invoke(main, ["db", "upgrade"])
    assert result.exit_code == 0, result.output
    head = store_engine.head_revision()
    assert f"schema of sqlite:///{tmp_path}/x.db at revision {head}\n" == result.stdout


def test_bad_setting_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    """A setting faithmon cannot use stops the command with its name and value."""
    monkeypatch.setenv("FAITHMON_SAMPLE_RATE", "2")
    result = CliRunner().invoke(main, ["traces", "list"])
    assert result.exit_code == 1
    assert "FAITHMON_SAMPLE_RATE='2': must be between 0.0 and 1.0" in result.stderr


def test_alerts_show_and_ack(demo_copy: Path) -> None:
    """`faithmon alerts show` prints an alert's details; `ack` records who acknowledged it."""
    runner = CliRunner()
    shown = runner.invoke(main, ["alerts", "show", "1"])
    assert shown.exit_code == 0 and "model=northwind-llm-1.1" in shown.stdout
    assert "baseline rate (95%): " in shown.stdout and "trace " in shown.stdout
    acked = runner.invoke(main, ["alerts", "ack", "1", "--by", "oncall"])
    assert acked.exit_code == 0 and "acknowledged by oncall" in acked.stdout
    details = json.loads(runner.invoke(main, ["alerts", "show", "1", "--json"]).stdout)["details"]
    assert details["acked_by"] == "oncall"
    missing = runner.invoke(main, ["alerts", "show", "99"])
    assert missing.exit_code == 1 and "no alert #99" in missing.stderr


def test_drift_status_shows_segments_without_writing(
    demo_copy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`faithmon drift status` reads the detectors and changes no alert."""
    runner = CliRunner()
    monkeypatch.setenv("FAITHMON_DRIFT_BASELINE_RECORDS", "140")
    monkeypatch.setenv("FAITHMON_DRIFT_BASELINE_DAYS", "0")
    # The demo's history spans seconds: like the demo, pin the threshold rather than
    # size it from a budget per 30 days.
    monkeypatch.setenv("FAITHMON_DRIFT_THRESHOLD", "15")
    before = runner.invoke(main, ["alerts", "list", "--json"]).stdout
    rows = json.loads(runner.invoke(main, ["drift", "status", "--json"]).stdout)
    # The demo's requests come from three tenants: each is a partition of its own.
    firing = [r for r in rows if r["state"] == "firing"]
    # The new model, and the re-indexed retriever of the demo's third story; with two
    # changes at once no one explains a tenant's whole traffic (its only service), which
    # may fire beside them. No stable segment does.
    drifted = {
        ("model", "northwind-llm-1.1"),
        ("retriever_version", "kb-2026.12"),
    }
    whole = {"tenant", "service"}
    assert firing and all(
        set(r["segment"].items()) & drifted or set(r["segment"]) <= whole for r in firing
    ), firing
    model = next(r for r in firing if r["segment"].get("model") and r["stream"] == "citation")
    assert model["current_interval"][0] > model["baseline_rate"]
    tenant = model["segment"]["tenant"]
    overall = next(
        r for r in rows if r["segment"] == {"tenant": tenant} and r["stream"] == model["stream"]
    )
    assert overall["state"] == f"explained by model=northwind-llm-1.1,tenant={tenant}"
    retrieval = [r for r in firing if r["stream"] == "retrieval"]
    assert retrieval and all(r["segment"].get("retriever_version") for r in retrieval)
    assert runner.invoke(main, ["alerts", "list", "--json"]).stdout == before
    text = runner.invoke(main, ["drift", "status"]).stdout
    assert f"model=northwind-llm-1.1,tenant={tenant}" in text and "firing" in text
    assert "-- partition tenant=acme" in text


def test_the_demo_hints_at_commands_as_this_shell_runs_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Started as `.venv/bin/faithmon` (not on PATH), the demo's closing hint says so; as
    `python -m faithmon`, or a `faithmon` found on PATH, the name alone."""
    from faithmon.demo.run import invoked_as

    script = tmp_path / ".venv" / "bin" / "faithmon"
    script.parent.mkdir(parents=True)
    script.write_text("#!/bin/sh\n")
    script.chmod(0o755)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PATH", "/nonexistent")
    assert invoked_as(str(script)) == ".venv/bin/faithmon"
    assert invoked_as("/usr/lib/python3/faithmon/__main__.py") == "faithmon"
    monkeypatch.setenv("PATH", str(script.parent))
    assert invoked_as(str(script)) == "faithmon"
    elsewhere = tmp_path / "other"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    monkeypatch.setenv("PATH", "/nonexistent")
    assert invoked_as(str(script)) == str(script)
