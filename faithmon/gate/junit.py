"""The gate as a JUnit XML report, the format every CI reads for its test view: one test
case per case (``classname`` ``faithmon.gate.cases``) and one per aggregate rule
(``faithmon.gate.rules``).

A case that breaks a rule is a ``<failure>`` whose message names the rules and the
claims not supported (each claim on a line of its own in the body); a case the judge
could not score is an ``<error>`` (the judge's trouble, not a low score).
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Sequence
from pathlib import Path

from .checks import CaseResult, RuleResult
from .report import claim_words, score_words

CASES = "faithmon.gate.cases"
RULES = "faithmon.gate.rules"


def _case(suite: ET.Element, result: CaseResult) -> None:
    judgement = result.judged.judgement
    case = ET.SubElement(
        suite,
        "testcase",
        classname=CASES,
        name=result.id,
        time=f"{judgement.latency_ms / 1000:.3f}",
    )
    if not result.judged.scored:
        ET.SubElement(
            case, "error", message=f"not scored: {judgement.error}", type="judge_error"
        ).text = judgement.error
        return
    if not result.failures:
        return
    claims = [claim_words(c) for c in result.not_supported]
    message = "; ".join(
        [score_words(result), *(f.text for f in result.failures)]
        + ([f"not supported: {'; '.join(claims)}"] if claims else [])
    )
    failure = ET.SubElement(
        case, "failure", message=message, type=",".join(f.rule for f in result.failures)
    )
    failure.text = "\n".join(
        [f"case {result.id} (line {result.judged.case.line}): {score_words(result)}"]
        + [f"- {f.text}" for f in result.failures]
        + [f"- not supported: {c}" for c in claims]
    )


def _rule(suite: ET.Element, rule: RuleResult) -> None:
    case = ET.SubElement(suite, "testcase", classname=RULES, name=rule.name, time="0")
    if not rule.passed:
        ET.SubElement(case, "failure", message=rule.figure, type=rule.name).text = rule.figure
    else:
        ET.SubElement(case, "system-out").text = rule.figure


def _suite(parent: ET.Element, name: str, cases: Sequence[ET.Element]) -> ET.Element:
    suite = ET.SubElement(parent, "testsuite", name=name)
    suite.extend(cases)
    _count(suite)
    return suite


def _count(element: ET.Element) -> None:
    tests = element.iter("testcase")
    found = [(c.find("failure") is not None, c.find("error") is not None) for c in tests]
    element.set("tests", str(len(found)))
    element.set("failures", str(sum(f for f, _ in found)))
    element.set("errors", str(sum(e for _, e in found)))
    element.set("skipped", "0")


def write_junit(
    path: Path,
    results: Sequence[CaseResult],
    rules: Sequence[RuleResult],
    properties: dict[str, str],
    refused_standing: str | None = None,
) -> None:
    """The report of a gate run; ``properties`` (dataset, judge, standing) go on the cases'
    suite. ``refused_standing``: why ``--require-proven`` refused the judge configuration,
    an error of its own (the judge's trouble, like a case it could not score)."""
    root = ET.Element("testsuites", name="faithmon gate")
    holder = ET.Element("holder")
    for result in results:
        _case(holder, result)
    cases = _suite(root, "faithmon gate: cases", list(holder))
    listed = ET.Element("properties")
    for name, value in properties.items():
        ET.SubElement(listed, "property", name=name, value=value)
    cases.insert(0, listed)
    holder = ET.Element("holder")
    for rule in rules:
        if rule.aggregate:
            _rule(holder, rule)
    if refused_standing is not None:
        case = ET.SubElement(holder, "testcase", classname=RULES, name="judge-standing", time="0")
        ET.SubElement(
            case, "error", message=refused_standing, type="require-proven"
        ).text = refused_standing
    _suite(root, "faithmon gate: rules", list(holder))
    _count(root)
    ET.indent(root)
    ET.ElementTree(root).write(path, encoding="utf-8", xml_declaration=True)
