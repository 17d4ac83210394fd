"""The JUnit report as a CI's reader sees it, and every usage error as one line (exit 2)."""

from __future__ import annotations

import json
import subprocess
import sys
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import Result

from tests.gate.data import FAITHFUL, HALF, SHIPPED, WRONG_DATE, case, one_line

Gate = Callable[..., Result]
Write = Callable[..., Path]


def test_the_junit_report_has_a_test_per_case_and_per_aggregate_rule(
    gate: Gate, write_cases: Write, tmp_path: Path
) -> None:
    """Parsed as a JUnit reader does: each case is a test case (failing ones carry their
    claims in the failure message), each aggregate rule another, and the counts add up."""
    cases = write_cases(
        case("fine", FAITHFUL, minimum=1),
        case("garden", HALF, minimum=0.8),
        case("late", WRONG_DATE, context=SHIPPED),
    )
    result = gate(str(cases), "--min-mean", "0.9", "--junit", "report.xml")
    assert result.exit_code == 1, result.output
    root = ET.parse(tmp_path / "report.xml").getroot()
    assert root.tag == "testsuites"
    tests = {(t.get("classname"), t.get("name")): t for t in root.iter("testcase")}
    assert sorted(tests) == [
        ("faithmon.gate.cases", "fine"),
        ("faithmon.gate.cases", "garden"),
        ("faithmon.gate.cases", "late"),
        ("faithmon.gate.rules", "max-critical-unsupported"),
        ("faithmon.gate.rules", "min-mean"),
    ]
    assert tests[("faithmon.gate.cases", "fine")].find("failure") is None
    garden = tests[("faithmon.gate.cases", "garden")].find("failure")
    assert garden is not None and garden.get("type") == "case-minimums"
    assert garden.get("message") == (
        'score 0.50; below its minimum 0.8; not supported: "It has a rooftop garden." '
        "unsupported [no chunk]"
    )
    late = tests[("faithmon.gate.cases", "late")]
    assert late.find("failure") is None  # no rule of its own: the aggregate catches it
    critical = tests[("faithmon.gate.rules", "max-critical-unsupported")].find("failure")
    assert critical is not None and "critical claims not supported: 1, max 0" in str(
        critical.get("message")
    )
    assert root.get("tests") == "5" and root.get("failures") == "3" and root.get("errors") == "0"
    for suite in root.iter("testsuite"):
        inside = suite.findall("testcase")
        assert suite.get("tests") == str(len(inside))
        assert suite.get("failures") == str(sum(t.find("failure") is not None for t in inside))
    properties = {p.get("name"): p.get("value") for p in root.iter("property")}
    assert set(properties) == {"dataset", "judge", "standing"}


@pytest.mark.parametrize(
    ("args", "content", "expected"),
    [
        (["missing.jsonl"], None, "Error: cannot read missing.jsonl: No such file or directory"),
        (
            ["cases.jsonl"],
            '{"id": "a", "response": "x", "retrieved_contexts": ["y"]}\nnot json\n{"id": 1}\n',
            "Error: cases.jsonl line 2: ",
        ),
        (
            ["cases.jsonl"],
            json.dumps(case("a", FAITHFUL, minimum=2)) + "\n",
            "Error: cases.jsonl line 1: 'minimum' must be a number from 0 to 1",
        ),
        (
            ["cases.jsonl"],
            json.dumps(case("a", FAITHFUL)) + "\n" + json.dumps(case("a", HALF)) + "\n",
            "Error: cases.jsonl line 2: id 'a' repeats line 1",
        ),
        (["cases.jsonl"], "\n\n", "Error: cases.jsonl: no cases (one JSON object per line)"),
        (
            ["cases.jsonl", "--min-percentile", "ten"],
            None,
            "Error: --min-percentile takes P:X (e.g. 10:0.8), not 'ten'",
        ),
        (
            ["cases.jsonl", "--baseline", "b.jsonl"],
            None,
            "Error: --baseline and --max-drop go together: give both or neither",
        ),
        (
            ["cases.jsonl", "--min-mean", "1.5"],
            None,
            "Error: Invalid value for '--min-mean': 1.5 is not in the range 0<=x<=1.",
        ),
        (
            ["cases.jsonl", "--rules", "gate.toml"],
            "[gate]\nmin_meen = 0.9\n",
            "Error: gate.toml: [gate] has no key 'min_meen'; keys: ",
        ),
        (
            ["cases.jsonl", "-o", "nowhere/out.jsonl"],
            None,
            "Error: -o nowhere/out.jsonl: the folder ",
        ),
        (
            ["cases.jsonl", "--baseline", "b.jsonl", "--max-drop", "0.1"],
            "not a record\n",
            "Error: the baseline b.jsonl line 1 is not a gate record",
        ),
    ],
)
def test_usage_errors_are_one_line_and_exit_2(
    gate: Gate,
    write_cases: Write,
    tmp_path: Path,
    args: list[str],
    content: str | None,
    expected: str,
) -> None:
    """A missing file, bad JSONL, a bad flag, rules file or baseline: one line, exit 2."""
    if "--rules" not in args and "--baseline" not in args and content is not None:
        (tmp_path / "cases.jsonl").write_text(content, encoding="utf-8")
    else:
        write_cases(case("a", FAITHFUL))
        if content is not None:
            target = "gate.toml" if "--rules" in args else "b.jsonl"
            (tmp_path / target).write_text(content, encoding="utf-8")
    line = one_line(gate(*args))
    assert line.startswith(expected), line


def test_an_unknown_judge_configuration_is_a_usage_error(
    gate: Gate, write_cases: Write, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The openai judge with no key is one line naming the setting, exit 2."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    cases = write_cases(case("a", FAITHFUL))
    line = one_line(gate(str(cases), "--judge", "openai"))
    assert "FAITHMON_JUDGE_API_KEY" in line


def test_the_exit_status_reaches_the_shell(write_cases: Write, tmp_path: Path) -> None:
    """Run as a process, a failing gate exits 1 and prints its report, no traceback."""
    cases = write_cases(case("garden", HALF, minimum=1))
    done = subprocess.run(
        [sys.executable, "-m", "faithmon", "gate", str(cases)],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
    )
    assert done.returncode == 1, done.stderr
    assert done.stdout.startswith("FAIL case garden: score 0.50")
    assert "Traceback" not in done.stderr
