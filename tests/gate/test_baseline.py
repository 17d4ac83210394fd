"""Baselines: a later run compared case by case and in aggregate with an earlier one, and
the dataset digest that keeps it from comparing different tests."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from click.testing import Result

from faithmon.gate import dataset_digest, parse_cases
from tests.gate.data import FAITHFUL, HALF, case, one_line

Gate = Callable[..., Result]
Write = Callable[..., Path]


def _baseline(gate: Gate, write_cases: Write, tmp_path: Path) -> Path:
    """The results of a run where every case is faithful, as ``baseline.jsonl``."""
    cases = write_cases(*[case(f"c{i}", FAITHFUL) for i in range(4)], name="before.jsonl")
    result = gate(str(cases), "-o", str(tmp_path / "baseline.jsonl"))
    assert result.exit_code == 0, result.output
    return tmp_path / "baseline.jsonl"


def test_a_baseline_comparison_catches_one_case_falling(
    gate: Gate, write_cases: Write, tmp_path: Path
) -> None:
    """One case whose answer changed from 1.0 to 0.5 fails case-drops by name (and the
    mean, down 0.125, fails a max drop of 0.1), though no other rule is set."""
    baseline = _baseline(gate, write_cases, tmp_path)
    lines = [case(f"c{i}", FAITHFUL) for i in range(4)]
    lines[2] = case("c2", HALF)
    cases = write_cases(*lines)
    result = gate(str(cases), "--baseline", str(baseline), "--max-drop", "0.1")
    assert result.exit_code == 1, result.output
    out = result.stdout.splitlines()
    assert out[0] == (
        "FAIL case c2: score 0.50; fell from 1.00 in the baseline (max drop 0.1); "
        'not supported: "It has a rooftop garden." unsupported [no chunk]'
    )
    assert "FAIL case-drops: 1 of 4 cases scored in the baseline fell more than 0.1: c2" in out
    assert (
        "FAIL baseline-mean: mean strict score 0.875 vs baseline 1.000 (drop 0.125, max 0.1)" in out
    )
    # A wider margin lets the mean through; the case still fell more than it allows.
    wider = gate(
        str(cases), "--baseline", str(baseline), "--max-drop", "0.2", "--min-percentile", "10:0"
    )
    assert wider.exit_code == 1, wider.output
    assert any(x.startswith("PASS baseline-mean") for x in wider.stdout.splitlines())
    # Each percentile rule is compared with the baseline's too: 0.65 against 1.0.
    assert (
        "FAIL baseline-percentile-10: strict score at percentile 10 0.650 vs baseline 1.000 "
        "(drop 0.350, max 0.2)" in wider.stdout.splitlines()
    )
    assert gate(str(cases), "--baseline", str(baseline), "--max-drop", "0.5").exit_code == 0


def test_a_baseline_made_on_another_dataset_is_refused(
    gate: Gate, write_cases: Write, tmp_path: Path
) -> None:
    """A case's minimum changed: the baseline is refused in one line (exit 2) before any
    judging, unless --allow-dataset-change."""
    baseline = _baseline(gate, write_cases, tmp_path)
    stored = json.loads(baseline.read_text().splitlines()[0])["dataset"]
    lines = [case(f"c{i}", FAITHFUL) for i in range(4)]
    lines[0] = case("c0", FAITHFUL, minimum=0.9)
    cases = write_cases(*lines)
    now = dataset_digest(parse_cases(cases.read_text().splitlines()))
    result = gate(str(cases), "--baseline", str(baseline), "--max-drop", "0")
    assert one_line(result) == (
        f"Error: the baseline {baseline} was made on dataset {stored}, these cases are "
        f"dataset {now}; compare anyway with --allow-dataset-change"
    )
    allowed = gate(
        str(cases), "--baseline", str(baseline), "--max-drop", "0", "--allow-dataset-change"
    )
    assert allowed.exit_code == 0, allowed.output


def test_the_digest_names_the_inputs_not_the_responses() -> None:
    """Responses and line order leave the digest as it is; a context, question, id,
    minimum or flag changes it."""

    def digest(*lines: dict[str, object]) -> str:
        return dataset_digest(parse_cases([json.dumps(line) for line in lines]))

    first = digest(case("a", FAITHFUL), case("b", HALF))
    assert digest(case("b", FAITHFUL), case("a", "Something else entirely.")) == first
    changed = [
        digest(case("a", FAITHFUL, context="The office is in York."), case("b", HALF)),
        digest({**case("a", FAITHFUL), "user_input": "Where?"}, case("b", HALF)),
        digest(case("z", FAITHFUL), case("b", HALF)),
        digest(case("a", FAITHFUL, minimum=0.5), case("b", HALF)),
        digest(case("a", FAITHFUL, critical=True), case("b", HALF)),
        digest(case("a", FAITHFUL, expected="faithful"), case("b", HALF)),
    ]
    assert len({first, *changed}) == 7


def test_results_name_the_dataset_the_judge_and_every_case(
    gate: Gate, write_cases: Write, tmp_path: Path
) -> None:
    """-o writes one evaluation record per case, passed or not, with the digest, judge
    fingerprint, prompt version, time, scores and claims."""
    cases = write_cases(case("a", FAITHFUL), case("b", HALF, minimum=1))
    result = gate(str(cases), "-o", "out.jsonl")
    assert result.exit_code == 1, result.output
    records = [json.loads(x) for x in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert [r["case"] for r in records] == ["a", "b"]
    digest = dataset_digest(parse_cases(cases.read_text().splitlines()))
    assert {r["dataset"] for r in records} == {digest}
    assert {r["judge"] for r in records} == {records[0]["judge"]}
    assert records[0]["judge"].startswith("offline/")
    assert records[0]["prompt_version"] is None  # the offline judge asks no prompt
    assert records[0]["time"].endswith("+00:00")
    assert [r["faithfulness"] for r in records] == [1.0, 0.5]
    assert [r["passed"] for r in records] == [True, False]
    assert records[1]["failures"] == [{"rule": "case-minimums", "text": "below its minimum 1"}]
    garden = records[1]["claims"][1]
    assert (garden["text"], garden["verdict"], garden["chunk"]) == (
        "It has a rooftop garden.",
        "unsupported",
        None,
    )
