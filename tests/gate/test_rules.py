"""Each rule of `faithmon gate`, the order of its output, and exit statuses 0 and 1."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import Result

from faithmon.gate.checks import percentile
from tests.gate.data import FAITHFUL, HALF, SHIPPED, WRONG_DATE, case

Gate = Callable[..., Result]
Write = Callable[..., Path]


def rule(result: Result, name: str) -> str:
    """The output line of rule ``name``."""
    [line] = [x for x in result.stdout.splitlines() if x.split(" ", 2)[1:2] == [f"{name}:"]]
    return line


def test_every_rule_holding_exits_0(gate: Gate, write_cases: Write) -> None:
    """Cases that meet their minimums, flags and the aggregates pass with exit status 0."""
    cases = write_cases(
        case("a", FAITHFUL, minimum=1.0, critical=True, expected="faithful"),
        case("b", HALF, minimum=0.5, expected="unfaithful"),
    )
    result = gate(str(cases), "--min-mean", "0.75", "--min-percentile", "50:0.75")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert all(not line.startswith("FAIL") for line in lines)
    assert rule(result, "min-mean").startswith("PASS min-mean: mean strict score 0.750 >= 0.75")
    assert rule(result, "min-percentile-50").startswith("PASS")
    assert (
        rule(result, "case-minimums")
        == "PASS case-minimums: 0 of 2 cases with a minimum fall below it"
    )
    assert rule(result, "critical-cases").startswith("PASS")
    assert rule(result, "expected-verdicts").startswith("PASS")
    assert rule(result, "max-critical-unsupported").startswith("PASS")
    assert lines[-1] == "gate: PASS (6 rules, 2 cases)"


def test_a_case_below_its_minimum_is_listed_first_with_its_claims(
    gate: Gate, write_cases: Write
) -> None:
    """The failing case's line comes before the rules and names each claim not supported
    with its verdict and chunk; the exit status is 1."""
    cases = write_cases(
        case("fine", FAITHFUL, minimum=1.0),
        case("garden", HALF, minimum=0.8),
    )
    result = gate(str(cases))
    assert result.exit_code == 1, result.output
    first, second = result.stdout.splitlines()[:2]
    assert first == (
        "FAIL case garden: score 0.50; below its minimum 0.8; not supported: "
        '"It has a rooftop garden." unsupported [no chunk]'
    )
    assert second == "FAIL case-minimums: 1 of 2 cases with a minimum fall below it: garden"
    assert result.stdout.splitlines()[-1].startswith("gate: FAIL (1 of 2 rules: case-minimums")


def test_a_critical_case_may_have_no_claim_unsupported(gate: Gate, write_cases: Write) -> None:
    """``critical: true`` fails a case with any claim not supported, critical or not."""
    cases = write_cases(case("c", HALF, critical=True))
    result = gate(str(cases), "--max-critical-unsupported", "5")
    assert result.exit_code == 1, result.output
    assert result.stdout.startswith("FAIL case c: score 0.50; critical case, 1 claim not supported")
    assert rule(result, "critical-cases").startswith("FAIL critical-cases: 1 of 1")
    # Its claim counts as critical over the dataset too; 5 are allowed here.
    assert rule(result, "max-critical-unsupported").startswith(
        "PASS max-critical-unsupported: critical claims not supported: 1, max 5"
    )


def test_an_expected_verdict_the_judge_does_not_share_fails(gate: Gate, write_cases: Write) -> None:
    """A sentinel-style case fails when the judge's verdict is not the expected one."""
    cases = write_cases(
        case("said-faithful", HALF, expected="faithful"),
        case("said-unfaithful", FAITHFUL, expected="unfaithful"),
        case("right", HALF, expected="unfaithful"),
    )
    result = gate(str(cases))
    assert result.exit_code == 1, result.output
    fails = [x for x in result.stdout.splitlines() if x.startswith("FAIL case ")]
    assert [x.split(":")[0] for x in fails] == [
        "FAIL case said-faithful",
        "FAIL case said-unfaithful",
    ]
    assert "expected faithful, judged unfaithful" in fails[0]
    assert "expected unfaithful, judged faithful" in fails[1]
    assert rule(result, "expected-verdicts") == (
        "FAIL expected-verdicts: 2 of 3 cases with an expected verdict are judged otherwise: "
        "said-faithful, said-unfaithful"
    )


@pytest.mark.parametrize(("bar", "status"), [("0.75", 0), ("0.8", 1)])
def test_min_mean_holds_the_dataset_mean(
    gate: Gate, write_cases: Write, bar: str, status: int
) -> None:
    """The mean strict score of 1.0 and 0.5 passes 0.75 and fails 0.8."""
    cases = write_cases(case("a", FAITHFUL), case("b", HALF))
    result = gate(str(cases), "--min-mean", bar)
    assert result.exit_code == status, result.output
    sign = ">=" if status == 0 else "<"
    assert f"mean strict score 0.750 {sign} {bar} (2 scored cases)" in rule(result, "min-mean")
    # No case broke a rule of its own: nothing is listed as a failing case.
    assert not any(x.startswith("FAIL case ") for x in result.stdout.splitlines())


def test_min_percentile_holds_the_low_tail(gate: Gate, write_cases: Write) -> None:
    """With 9 faithful cases and one at 0.5, the 50th percentile is 1.0 and the 10th 0.95."""
    cases = write_cases(*[case(f"ok{i}", FAITHFUL) for i in range(9)], case("low", HALF))
    result = gate(str(cases), "--min-percentile", "50:1", "--min-percentile", "10:0.96")
    assert result.exit_code == 1, result.output
    assert rule(result, "min-percentile-50").startswith(
        "PASS min-percentile-50: strict score at percentile 50 1.000 >= 1"
    )
    assert rule(result, "min-percentile-10").startswith(
        "FAIL min-percentile-10: strict score at percentile 10 0.950 < 0.96"
    )


def test_percentiles_interpolate_between_ranks() -> None:
    """The percentile is numpy's default: linear between the two nearest ranks."""
    assert percentile([0.0, 0.5, 1.0], 10) == pytest.approx(0.1)
    assert percentile([0.2], 90) == 0.2
    assert percentile([1.0, 0.0], 100) == 1.0


def test_no_critical_claim_may_be_unsupported_by_default(gate: Gate, write_cases: Write) -> None:
    """A critical claim (a date) contradicted fails the default --max-critical-unsupported 0,
    and a higher bound lets it through."""
    cases = write_cases(case("late", WRONG_DATE, context=SHIPPED), case("fine", FAITHFUL))
    failed = gate(str(cases))
    assert failed.exit_code == 1, failed.output
    assert rule(failed, "max-critical-unsupported").startswith(
        "FAIL max-critical-unsupported: critical claims not supported: 1, max 0"
    )
    assert gate(str(cases), "--max-critical-unsupported", "1").exit_code == 0


def test_rules_come_from_a_toml_file_and_flags_win(
    gate: Gate, write_cases: Write, tmp_path: Path
) -> None:
    """A [gate] table sets the rules; a flag given on the command line overrides its key."""
    cases = write_cases(case("a", FAITHFUL), case("b", HALF))
    rules = tmp_path / "gate.toml"
    rules.write_text('[gate]\nmin_mean = 0.9\nmin_percentile = ["50:0.5"]\n', encoding="utf-8")
    strict = gate(str(cases), "--rules", str(rules))
    assert strict.exit_code == 1, strict.output
    assert rule(strict, "min-mean").startswith("FAIL min-mean: mean strict score 0.750 < 0.9")
    assert rule(strict, "min-percentile-50").startswith("PASS")
    eased = gate(str(cases), "--rules", str(rules), "--min-mean", "0.7")
    assert eased.exit_code == 0, eased.output


def test_an_answer_with_no_claim_has_no_score(gate: Gate, write_cases: Write) -> None:
    """A greeting is left out of the mean, and fails a minimum it has no score to meet."""
    cases = write_cases(case("hello", "Thanks for asking!", minimum=0.5), case("a", FAITHFUL))
    result = gate(str(cases), "--min-mean", "1")
    assert result.exit_code == 1, result.output
    out = result.stdout.splitlines()
    assert out[0] == "FAIL case hello: no claims; no claim to score (minimum 0.5)"
    assert rule(result, "min-mean") == (
        "PASS min-mean: mean strict score 1.000 >= 1 (1 scored cases, 1 without claims)"
    )
