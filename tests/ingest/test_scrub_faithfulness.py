"""Faithfulness survives scrubbing: the offline judge gives the same verdicts on the
shared judge data before and after the scrubber (names and addresses on) has run.

Every run checks the judge's committed labelled sample (``tests/judge/data``); the quality
tier (``pytest -m quality``) checks a few hundred rows of ``../shared/data/faithfulness``
beside the repository, and is skipped without it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from pathlib import Path

import pytest

from faithmon.ingest.scrub import PiiScrubber
from faithmon.judge.offline import OfflineJudge
from faithmon.model import Chunk, RagRecord
from tests.timing import days_ago

DATA = Path(__file__).resolve().parents[3] / "shared" / "data" / "faithfulness"
SAMPLE = Path(__file__).resolve().parents[1] / "judge" / "data" / "labelled_sample.jsonl"
KEY = b"faithfulness-survives-scrubbing-key"
# Every FILES[name]-th row of each file: a few hundred items, a few seconds.
FILES = {"ragtruth.jsonl": 4, "halueval_qa.jsonl": 10, "summedits.jsonl": 16}
AGREEMENT = 0.99


def _rows() -> Iterator[dict[str, object]]:
    for name, step in FILES.items():
        path = DATA / name
        if not path.exists():
            continue
        with path.open(encoding="utf-8") as lines:
            for number, line in enumerate(lines):
                if number % step == 0 and line.strip():
                    yield json.loads(line)


def _record(row: dict[str, object]) -> RagRecord:
    contexts = row["contexts"]
    assert isinstance(contexts, list)
    return RagRecord(
        trace_id=str(row["id"]),
        question=str(row["question"] or ""),
        answer=str(row["response"]),
        chunks=tuple(Chunk(i, str(text)) for i, text in enumerate(contexts)),
        labels={},
        started_at=days_ago(1),
    )


def _verdicts(judge: OfflineJudge, record: RagRecord) -> list[str]:
    judgement = judge.judge(record.question, [c.text for c in record.chunks], record.answer)
    return [claim.verdict for claim in judgement.claims]


def _agreement(rows: Iterable[dict[str, object]]) -> tuple[int, int, int]:
    """(claims, claims with the same verdict after scrubbing, records the scrubber changed)."""
    judge = OfflineJudge()
    scrubber = PiiScrubber(KEY)  # names and addresses on, as by default
    claims = same = changed_records = 0
    for row in rows:
        record = _record(row)
        scrubbed = scrubber(record)
        if scrubbed != record:
            changed_records += 1
        before, after = _verdicts(judge, record), _verdicts(judge, scrubbed)
        # Claims are paired in order; a claim with no partner counts as changed.
        claims += max(len(before), len(after))
        same += sum(b == a for b, a in zip(before, after, strict=False))
    return claims, same, changed_records


def test_verdicts_match_after_scrubbing_on_the_labelled_sample() -> None:
    """At least 99% of claims keep their verdict on the judge's committed labelled sample,
    which holds names, places and numbers for the scrubber to replace."""
    with SAMPLE.open(encoding="utf-8") as lines:
        claims, same, changed_records = _agreement(json.loads(line) for line in lines)
    assert claims > 200
    assert changed_records > 25
    assert same / claims >= AGREEMENT, f"{claims - same} of {claims} claims changed verdict"


@pytest.mark.quality
@pytest.mark.skipif(not DATA.is_dir(), reason=f"no shared judge data at {DATA}")
def test_verdicts_match_after_scrubbing() -> None:
    """At least 99% of claims keep their verdict, on a sample of the whole files."""
    claims, same, changed_records = _agreement(_rows())
    assert claims > 500
    # The sample must exercise the scrubber: names, addresses and numbers are replaced.
    assert changed_records > 50
    assert same / claims >= AGREEMENT, f"{claims - same} of {claims} claims changed verdict"
