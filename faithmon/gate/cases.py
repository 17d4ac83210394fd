"""A gate's cases: the lines `faithmon score` reads, plus what each case asks of its answer.

A line has the question, response and contexts under RAGAS's, DeepEval's or plain names
(see :mod:`faithmon.judge.jsonl`) and, optionally:

- ``id``: the case's name in every output (default ``line-N``); unique in the file;
- ``minimum``: the least strict score the case may have (0 to 1);
- ``critical: true``: the case may have no claim that is not supported;
- ``expected``: ``faithful`` or ``unfaithful``, a sentinel-style case whose verdict the
  judge must agree with.

Other keys (a RAGAS ``reference``, a team's own notes) are kept out of the way.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal

from ..judge.citations import Source
from ..judge.jsonl import CONTEXT_NAMES, sources
from .errors import GateInputError

Expected = Literal["faithful", "unfaithful"]
EXPECTED: tuple[Expected, ...] = ("faithful", "unfaithful")


@dataclass(frozen=True, slots=True)
class Case:
    id: str
    line: int
    question: str
    response: str
    sources: tuple[Source, ...]
    contexts: tuple[Any, ...]
    """The contexts as the line gave them (strings or objects): what the digest reads."""
    minimum: float | None = None
    critical: bool = False
    expected: Expected | None = None


def _minimum(item: dict[str, Any]) -> float | None:
    value = item.get("minimum")
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
        raise ValueError("'minimum' must be a number from 0 to 1")
    return float(value)


def _case(item: dict[str, Any], number: int) -> Case:
    question, given, response = sources(item)
    contexts = next(item[name] for name in CONTEXT_NAMES if name in item)
    case_id = item.get("id", f"line-{number}")
    if isinstance(case_id, bool) or not isinstance(case_id, str | int) or str(case_id) == "":
        raise ValueError("'id' must be a non-empty string or a number")
    critical = item.get("critical", False)
    if not isinstance(critical, bool):
        raise ValueError("'critical' must be true or false")
    expected = item.get("expected")
    if expected is not None and expected not in EXPECTED:
        raise ValueError('\'expected\' must be "faithful" or "unfaithful"')
    return Case(
        id=str(case_id),
        line=number,
        question=question,
        response=response,
        sources=tuple(given),
        contexts=tuple(contexts),
        minimum=_minimum(item),
        critical=critical,
        expected=expected,
    )


def parse_cases(lines: Iterable[str], name: str = "cases") -> list[Case]:
    """Every case of a JSONL file (blank lines skipped); GateInputError naming the first bad
    line (and how many more there are), a repeated id, or a file with no case."""
    cases: list[Case] = []
    problems: list[str] = []
    seen: dict[str, int] = {}
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
            if not isinstance(item, dict):
                raise ValueError("expected a JSON object")
            case = _case(item, number)
        except ValueError as exc:
            problems.append(f"{name} line {number}: {exc}")
            continue
        if case.id in seen:
            problems.append(f"{name} line {number}: id {case.id!r} repeats line {seen[case.id]}")
            continue
        seen[case.id] = number
        cases.append(case)
    if problems:
        more = f" (and {len(problems) - 1} more bad lines)" if len(problems) > 1 else ""
        raise GateInputError(problems[0] + more)
    if not cases:
        raise GateInputError(f"{name}: no cases (one JSON object per line)")
    return cases
