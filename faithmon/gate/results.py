"""The evaluation records a gate run writes (``-o RESULTS.jsonl``), and reading one back as
the baseline of a later run.

One JSON line per case: its id, the dataset digest, the judge configuration's
fingerprint and prompt version, when it was judged, its scores and claims (the shape
`faithmon score` writes), and what the gate made of it. The cases are all there, passed
or not, whatever the aggregates say.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..judge.jsonl import judgement_fields
from ..judge.prompts import PROMPT_HASH, PROMPT_ID
from .checks import CaseResult, critical_claims
from .errors import GateInputError

PROMPTED = frozenset({"openai", "cascade"})
"""The judges that ask an LLM with faithmon's versioned prompts."""


def prompt_version(kind: str) -> str | None:
    """The prompt id and hash the judge ``kind`` asks with; None for the offline judge."""
    return f"{PROMPT_ID}#{PROMPT_HASH}" if kind in PROMPTED else None


def record(result: CaseResult, dataset: str, prompt: str | None) -> dict[str, Any]:
    """One case's evaluation record."""
    judged = result.judged
    return {
        "case": judged.case.id,
        "dataset": dataset,
        "judge": judged.judgement.judge,
        "prompt_version": prompt,
        "time": judged.at.isoformat(),
        "question": judged.case.question,
        "response": judged.case.response,
        "minimum": judged.case.minimum,
        "critical": judged.case.critical,
        "expected": judged.case.expected,
        **judgement_fields(judged.judgement),
        "critical_unsupported": len(critical_claims(judged)) if judged.scored else None,
        "passed": result.passed,
        "failures": [{"rule": f.rule, "text": f.text} for f in result.failures],
    }


def write_records(
    path: Path, results: Iterable[CaseResult], dataset: str, prompt: str | None
) -> None:
    with path.open("w", encoding="utf-8") as out:
        for result in results:
            out.write(json.dumps(record(result, dataset, prompt), ensure_ascii=False) + "\n")


@dataclass(frozen=True, slots=True)
class Baseline:
    path: Path
    dataset: str
    scores: dict[str, float | None]
    """Each case id's strict score in that run; None: no claim, or not scored."""


def read_baseline(path: Path) -> Baseline:
    """The records of an earlier run; GateInputError for a file that is not one."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise GateInputError(f"cannot read the baseline {path}: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise GateInputError(f"the baseline {path} is not UTF-8 text") from None
    return _parse(path, lines)


def _parse(path: Path, lines: Sequence[str]) -> Baseline:
    digests: set[str] = set()
    scores: dict[str, float | None] = {}
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except ValueError:
            item = None
        score = item.get("faithfulness") if isinstance(item, dict) else None
        if (
            not isinstance(item, dict)
            or not isinstance(item.get("case"), str)
            or not isinstance(item.get("dataset"), str)
            or not (score is None or isinstance(score, int | float))
        ):
            raise GateInputError(
                f"the baseline {path} line {number} is not a gate record (`faithmon gate -o` "
                "writes them)"
            )
        digests.add(item["dataset"])
        scores[item["case"]] = float(score) if score is not None else None
    if not scores:
        raise GateInputError(f"the baseline {path} holds no records")
    if len(digests) > 1:
        raise GateInputError(
            f"the baseline {path} mixes datasets {', '.join(sorted(digests))}: one run per file"
        )
    return Baseline(path, digests.pop(), scores)


def refuse_other_dataset(baseline: Baseline, dataset: str, allowed: bool) -> None:
    """GateInputError when ``baseline`` was made on another dataset, unless ``allowed``."""
    if baseline.dataset != dataset and not allowed:
        raise GateInputError(
            f"the baseline {baseline.path} was made on dataset {baseline.dataset}, these cases "
            f"are dataset {dataset}; compare anyway with --allow-dataset-change"
        )
