"""OfflineJudge: the deterministic lexical judge, its statuses, quotes and scores."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from faithmon.judge import OfflineJudge
from faithmon.judge.text import normalise

CONTEXT = "Order A17 shipped on 3 March by courier."
HALUEVAL = Path(__file__).resolve().parents[3] / "shared/data/faithfulness/halueval_qa.jsonl"
# Measured 0.922 (recall 0.882 on unfaithful, 0.962 on faithful); the floor leaves a margin.
HALUEVAL_FLOOR = 0.90


@pytest.fixture
def judge() -> OfflineJudge:
    """The offline judge with its default thresholds."""
    return OfflineJudge()


@pytest.mark.parametrize(
    ("answer", "faithfulness"),
    [
        ("Order A17 shipped on 3 March by courier.", 1.0),
        ("Order A17 shipped on 3 March by courier. It arrives tomorrow.", 0.5),
        ("Order A17 was cancelled.", 0.0),
    ],
)
def test_seed_example(judge: OfflineJudge, answer: str, faithfulness: float) -> None:
    """The seed example scores 1.0 when copied, 0.5 with an invention, 0.0 when wrong."""
    judgement = judge.judge("Where is order A17?", [CONTEXT], answer)

    assert judgement.status == "ok"
    assert judgement.judge == judge.name == "offline/v2"
    assert judgement.faithfulness == faithfulness


def test_quotes_are_verbatim_from_their_chunk(judge: OfflineJudge) -> None:
    """Every supported or contradicted claim quotes text found in the chunk it points at."""
    chunks = [
        "Refunds take 5 business days. They go to the original card.",
        CONTEXT + " The courier desk opens at 8:00.",
    ]
    answer = (
        "Order A17 shipped on 3 March by courier. Refunds take 9 business days. "
        "They go to the original card. The desk opens at 8:00."
    )

    judgement = judge.judge("q", chunks, answer)

    checked = [c for c in judgement.claims if c.verdict in ("supported", "contradicted")]
    assert len(checked) >= 3
    for claim in checked:
        assert claim.chunk is not None and claim.quote
        assert normalise(claim.quote) in normalise(chunks[claim.chunk])


def test_changed_number_is_contradicted_and_critical(judge: OfflineJudge) -> None:
    """Changing the date in a copied sentence is a critical contradiction."""
    judgement = judge.judge("q", [CONTEXT], "Order A17 shipped on 4 March by courier.")

    [claim] = judgement.claims
    assert claim.verdict == "contradicted"
    assert claim.critical
    assert claim.chunk == 0
    assert judgement.faithfulness == 0.0


def test_flipped_negation_is_contradicted(judge: OfflineJudge) -> None:
    """Negating a sentence of the context contradicts it."""
    judgement = judge.judge(
        "q", ["Express shipping is available in the EU."], "Express shipping is not available."
    )

    assert [c.verdict for c in judgement.claims] == ["contradicted"]


@pytest.mark.parametrize(
    "answer",
    [
        "Hello! Thanks for asking.",
        "I don't know.",
        "Sorry, I cannot find that. Is there anything else?",
        "",
    ],
)
def test_answers_without_claims(judge: OfflineJudge, answer: str) -> None:
    """Greetings and abstentions give no_claims and no score: never NaN, never 1.0."""
    judgement = judge.judge("q", [CONTEXT], answer)

    assert judgement.status == "no_claims"
    assert judgement.claims == ()
    assert judgement.faithfulness is None
    assert judgement.lenient is None


@pytest.mark.parametrize("chunks", [[], [""], ["  ", "\n"]])
def test_empty_context(judge: OfflineJudge, chunks: list[str]) -> None:
    """Without context every claim is unsupported, the status says so and the score is 0.0."""
    judgement = judge.judge("q", chunks, CONTEXT + " It arrives tomorrow.")

    assert judgement.status == "empty_context"
    assert [c.verdict for c in judgement.claims] == ["unsupported", "unsupported"]
    assert judgement.faithfulness == 0.0
    assert judgement.faithfulness is not None and not math.isnan(judgement.faithfulness)


def test_lenient_and_strict_scores(judge: OfflineJudge) -> None:
    """Strict counts only supported claims; lenient counts all but contradicted ones."""
    answer = (
        "Order A17 shipped on 3 March by courier. "
        "Order A17 shipped on 9 March by courier. "
        "It arrives tomorrow."
    )

    judgement = judge.judge("q", [CONTEXT], answer)

    assert [c.verdict for c in judgement.claims] == ["supported", "contradicted", "unsupported"]
    assert judgement.faithfulness == pytest.approx(1 / 3)
    assert judgement.lenient == pytest.approx(2 / 3)


def test_halueval_balanced_accuracy(judge: OfflineJudge) -> None:
    """On HaluEval QA the judge separates faithful from unfaithful answers above a floor."""
    if not HALUEVAL.is_file():
        pytest.skip(f"{HALUEVAL} is not present")
    hits = {"unfaithful": 0, "faithful": 0}
    totals = {"unfaithful": 0, "faithful": 0}
    with HALUEVAL.open(encoding="utf-8") as rows:
        for line in rows:
            row = json.loads(line)
            judgement = judge.judge(row["question"], row["contexts"], row["response"])
            score = judgement.faithfulness
            predicted = "unfaithful" if score is not None and score < 1.0 else "faithful"
            totals[row["label"]] += 1
            hits[row["label"]] += predicted == row["label"]

    assert all(totals.values())
    balanced = (
        hits["unfaithful"] / totals["unfaithful"] + hits["faithful"] / totals["faithful"]
    ) / 2
    assert balanced >= HALUEVAL_FLOOR, f"balanced accuracy {balanced:.3f}"
