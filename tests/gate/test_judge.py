"""The judge behind the gate: a real LLM judge on a loopback OpenAI-compatible endpoint
(through the `openai` client), its failures kept apart as exit status 3, its budget, and
the standing of its configuration on the sentinels."""

from __future__ import annotations

import json
import shutil
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from faithmon.cli import main
from faithmon.judge.prompts import PROMPT_HASH, PROMPT_ID
from tests.gate.data import FAITHFUL, LEEDS, case
from tests.openai_server import OpenAIServer, Step, supporting
from tests.servers import serve_in_thread

Gate = Callable[..., Result]
Write = Callable[..., Path]

# Each of these needs the LLM (the offline pre-checks settle none of them), and each is
# another answer, so the judge's verdict cache answers none of them for another.
EXTRAS = ("It has a rooftop garden.", "It has a red door.", "It has a quiet library.")
NEEDS_LLM = [case(f"c{i}", f"{LEEDS} {extra}") for i, extra in enumerate(EXTRAS)]


@pytest.fixture
def llm(monkeypatch: pytest.MonkeyPatch) -> Iterator[OpenAIServer]:
    """A judge endpoint on loopback that finds every sentence supported unless a test
    scripts other replies; the openai judge is configured to ask it, one case at a time."""
    server = OpenAIServer(supporting)
    with serve_in_thread(server.app) as url:
        monkeypatch.setenv("FAITHMON_JUDGE", "openai")
        monkeypatch.setenv("FAITHMON_JUDGE_BASE_URL", url + "/v1")
        monkeypatch.setenv("FAITHMON_JUDGE_API_KEY", "test-key")
        monkeypatch.setenv("FAITHMON_JUDGE_CONCURRENCY", "1")
        monkeypatch.setenv("FAITHMON_JUDGE_MAX_ATTEMPTS", "1")
        yield server


def test_the_llm_judge_scores_the_cases(
    llm: OpenAIServer, gate: Gate, write_cases: Write, tmp_path: Path
) -> None:
    """Through the real client, every case is judged (a repeated answer from the judge's
    verdict cache); the records carry the configuration's fingerprint and prompt version."""
    cases = write_cases(*NEEDS_LLM, {**NEEDS_LLM[0], "id": "again"})
    result = gate(str(cases), "--min-mean", "1", "-o", "out.jsonl")
    assert result.exit_code == 0, result.output
    assert len(llm.requests) == 3
    records = [json.loads(x) for x in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert {r["prompt_version"] for r in records} == {f"{PROMPT_ID}#{PROMPT_HASH}"}
    assert all(r["judge"].startswith("openai:") for r in records)


def test_a_refused_key_is_exit_3_and_stops_the_calls(
    llm: OpenAIServer, gate: Gate, write_cases: Write, tmp_path: Path
) -> None:
    """A 401 is the judge's failure, not low faithfulness: exit 3 with the count and the
    causes, no further call, and the cases as errors (not failures) in the JUnit file."""
    refusal = {"message": "Incorrect API key provided", "type": "invalid_request_error"}
    llm.play(Step(status=401, error=refusal))
    cases = write_cases(*NEEDS_LLM)
    result = gate(str(cases), "--min-mean", "0.9", "--junit", "report.xml")
    assert result.exit_code == 3, result.output
    assert len(llm.requests) == 1
    out = result.stdout.splitlines()
    assert out[0].startswith("ERROR case c0: not scored: HTTP 401:")
    assert out[1].startswith("ERROR case c1: not scored: not sent: the endpoint refused the judge")
    assert not any(x.startswith("FAIL case") for x in out)
    [summary] = [x for x in out if "could not be scored" in x]
    assert summary.startswith("3 of 3 cases could not be scored by the judge (2 × not sent")
    assert "1 × HTTP 401" in summary and summary.endswith("not low faithfulness")
    assert out[-1] == "gate: JUDGE FAILED (3 cases not scored); rules failing meanwhile: min-mean"
    root = ET.parse(tmp_path / "report.xml").getroot()
    cases_suite = next(s for s in root.iter("testsuite") if s.get("name", "").endswith("cases"))
    assert cases_suite.get("errors") == "3" and cases_suite.get("failures") == "0"


def test_a_failing_call_among_passing_cases_is_still_exit_3(
    llm: OpenAIServer, gate: Gate, write_cases: Write
) -> None:
    """One 500 (no retry left) leaves one case unscored: the others pass, the gate exits 3."""
    llm.play(Step(status=500, error={"message": "upstream overloaded", "type": "server_error"}))
    cases = write_cases(*NEEDS_LLM)
    result = gate(str(cases))
    assert result.exit_code == 3, result.output
    assert len(llm.requests) == 3
    [error] = [x for x in result.stdout.splitlines() if x.startswith("ERROR")]
    assert error.startswith("ERROR case c0: not scored: 1 attempts failed; last: HTTP 500")
    assert "1 of 3 cases could not be scored by the judge" in result.stdout


def test_the_judge_budget_bounds_the_run(
    llm: OpenAIServer, gate: Gate, write_cases: Write, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With FAITHMON_JUDGE_DAILY_BUDGET spent by the first case, the rest are not sent."""
    monkeypatch.setenv("FAITHMON_JUDGE_DAILY_BUDGET", "50")  # one reply reports 60 tokens
    cases = write_cases(*NEEDS_LLM)
    result = gate(str(cases))
    assert result.exit_code == 3, result.output
    assert len(llm.requests) == 1
    assert "2 × not sent: the judge budget is spent (60 of 50 tokens)" in result.stdout


@pytest.fixture
def store(sqlite_template: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A migrated SQLite store of the test's own, named by FAITHMON_DATABASE_URL."""
    path = tmp_path / "faithmon.db"
    shutil.copyfile(sqlite_template, path)
    monkeypatch.setenv("FAITHMON_DATABASE_URL", f"sqlite:///{path}")
    return path


def _sentinels(tmp_path: Path, swap: bool) -> None:
    """Run a sentinel set through the offline judge and keep it in the store: with its
    labels swapped, so that the judge disagrees with every case (unproven), or not."""
    labels = ("unsupported", "supported") if swap else ("supported", "unsupported")
    lines = [
        {
            "id": "s1",
            "question": "Where?",
            "chunks": [LEEDS],
            "answer": FAITHFUL,
            "expected": labels[0],
        },
        {
            "id": "s2",
            "question": "Where?",
            "chunks": [LEEDS],
            "answer": "The office is in York.",
            "expected": labels[1],
        },
    ]
    path = tmp_path / "sentinels.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    runner = CliRunner()
    for args in (["sentinel", "add", str(path), "--name", "office"], ["sentinel", "run"]):
        result = runner.invoke(main, args)
        assert result.exit_code == 0, result.output


def test_an_unproven_judge_is_named_and_require_proven_exits_3(
    store: Path, gate: Gate, write_cases: Write, tmp_path: Path
) -> None:
    """The gate reads the configuration's standing from the store: unproven is said, and
    with --require-proven it is exit 3, though every rule holds."""
    _sentinels(tmp_path, swap=True)
    cases = write_cases(case("a", FAITHFUL))
    said = gate(str(cases))
    assert said.exit_code == 0, said.output
    [standing] = [x for x in said.stdout.splitlines() if x.startswith("judge standing:")]
    assert " is unproven: it cannot separate the office sentinels" in standing
    assert standing.endswith("(not proven: --require-proven would make this exit 3)")
    refused = gate(str(cases), "--require-proven", "--junit", "report.xml")
    assert refused.exit_code == 3, refused.output
    assert refused.stdout.splitlines()[-1] == (
        "gate: JUDGE FAILED (the judge configuration is unproven (--require-proven))"
    )
    root = ET.parse(tmp_path / "report.xml").getroot()
    [test] = [t for t in root.iter("testcase") if t.get("name") == "judge-standing"]
    error = test.find("error")
    assert error is not None and " is unproven: " in str(error.get("message"))


def test_a_proven_judge_passes_require_proven(
    store: Path, gate: Gate, write_cases: Write, tmp_path: Path
) -> None:
    """A configuration whose sentinel run clears the floor is proven, and the gate passes."""
    _sentinels(tmp_path, swap=False)
    result = gate(str(write_cases(case("a", FAITHFUL))), "--require-proven")
    assert result.exit_code == 0, result.output
    assert " is proven: it separates the office sentinels" in result.stdout


def test_with_no_store_require_proven_exits_3(gate: Gate, write_cases: Write) -> None:
    """No store, no sentinel run known: the standing is unknown, not proven."""
    result = gate(str(write_cases(case("a", FAITHFUL))), "--require-proven")
    assert result.exit_code == 3, result.output
    assert "has no known sentinel run: no faithmon database at" in result.stdout
