"""OfflineJudge: the deterministic lexical judge, its statuses, quotes and scores."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from faithmon.judge import OfflineJudge
from faithmon.judge.text import normalise

CONTEXT = "Order A17 shipped on 3 March by courier."
DATA = Path(__file__).resolve().parents[3] / "shared/data/faithfulness"
SAMPLE = Path(__file__).parent / "data" / "labelled_sample.jsonl"
# offline/v10 scores 0.71 on the sample (0.76 on RAGTruth whole); the floor leaves a margin.
SAMPLE_FLOOR = 0.66
# offline/v4 measured (bench/judge_quality.py): HaluEval QA 0.805, RAGTruth 0.765 overall,
# 0.825 on its QA part and 0.700 on data-to-text (v3: 0.735, 0.795, 0.531), SummEdits
# 0.606; the floors leave a margin. v1 reached 0.922 on HaluEval by demanding that one
# chunk sentence cover a claim, which made RAGTruth's paraphrases all unsupported (0.502).
FLOORS = {
    ("halueval_qa", None): 0.77,
    ("ragtruth", None): 0.74,
    ("ragtruth", "qa"): 0.79,
    ("ragtruth", "data2text"): 0.66,
    ("summedits", None): 0.58,
}


@pytest.fixture
def judge() -> OfflineJudge:
    """The offline judge with its default thresholds."""
    return OfflineJudge()


@pytest.mark.parametrize(
    ("answer", "faithfulness", "lenient"),
    [
        ("Order A17 shipped on 3 March by courier.", 1.0, 1.0),
        ("Order A17 shipped on 3 March by courier. It arrives tomorrow.", 0.5, 1.0),
        ("Order A17 was cancelled.", 0.0, 0.0),
    ],
)
def test_seed_example(
    judge: OfflineJudge, answer: str, faithfulness: float, lenient: float
) -> None:
    """The seed example scores 1.0 when copied, 0.5 with an invention, 0.0 when wrong;
    "cancelled" against "shipped" is a contradiction, so the lenient score drops too."""
    judgement = judge.judge("Where is order A17?", [CONTEXT], answer)

    assert judgement.status == "ok"
    assert judgement.judge == judge.name == "offline/v10"
    assert judgement.faithfulness == faithfulness
    assert judgement.lenient == lenient


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


def test_negation_elsewhere_in_the_claim_contradicts_nothing(judge: OfflineJudge) -> None:
    """A negation bearing on a word the context does not say ("if you do not") is no
    contradiction of the sentence the claim otherwise repeats."""
    chunks = ["Membership costs 30 euros a year for students who register online."]
    answer = (
        "Membership costs 30 euros a year if you register online as a student, "
        "and nothing changes if you do not."
    )

    assert [c.verdict for c in judge.judge("q", chunks, answer).claims] == ["supported"]


@pytest.mark.parametrize(
    ("context", "answer"),
    [
        ("The laptop costs $1,299 and ships in 5 days.", "It costs 1299 dollars."),
        ("The laptop costs $1,299 and ships in 5 days.", "It ships in five days."),
        ("Open 17:30-21:30. Reviewed on 2013-08-19.", "It opens at 5:30 pm."),
        ("Open 17:30-21:30. Reviewed on 2013-08-19.", "It was reviewed in August 2013."),
        ("The Fair Labor Standards Act covers mechanics.", "The FLSA covers mechanics."),
        ("Bookings open on 3 March in Goleta, CA.", "Bookings open in Goleta, California."),
    ],
)
def test_normalised_forms_are_supported(judge: OfflineJudge, context: str, answer: str) -> None:
    """Amounts, number words, times, dates, acronyms and state codes match their other forms."""
    judgement = judge.judge("q", [context], answer)

    assert [c.verdict for c in judgement.claims] == ["supported"]


def test_paraphrase_over_several_sentences_is_supported(judge: OfflineJudge) -> None:
    """A summary sentence whose words come from different context sentences is supported."""
    context = (
        "The council met on Monday. It approved a new budget for the city library. "
        "Funding for the library had been cut last year."
    )

    judgement = judge.judge("q", [context], "On Monday the council approved the library budget.")

    assert judgement.faithfulness == 1.0


def test_invented_name_is_unsupported(judge: OfflineJudge) -> None:
    """A capitalised name found nowhere in the context makes the claim unsupported."""
    context = "Automotive technicians in Alaska have the highest average pay."

    judgement = judge.judge("q", [context], "Technicians in Mississippi have the highest pay.")

    assert [c.verdict for c in judgement.claims] == ["unsupported"]


def test_record_attributes(judge: OfflineJudge) -> None:
    """Against a JSON record, false and true attributes contradict, null ones are unsupported."""
    record = (
        '{"name": "X Cafe", "attributes": {"WiFi": "no", "OutdoorSeating": true, "Music": null}}'
    )
    answer = (
        "X Cafe offers free WiFi. It has outdoor seating. "
        "It does not offer outdoor seating. There is live music."
    )

    judgement = judge.judge("q", [record], answer)

    verdicts = [c.verdict for c in judgement.claims]
    assert verdicts == ["contradicted", "supported", "contradicted", "unsupported"]
    assert judgement.claims[0].quote == '"WiFi": "no"'


@pytest.mark.parametrize(
    "answer",
    [
        "Hello! Thanks for asking.",
        "Sure! Here is a summary of the article:",
        "The passages do not mention the price.",
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


def _balanced(hits: dict[str, int], totals: dict[str, int]) -> float:
    assert all(totals.values())
    return (hits["unfaithful"] / totals["unfaithful"] + hits["faithful"] / totals["faithful"]) / 2


def test_verdicts_on_the_labelled_sample_are_pinned(judge: OfflineJudge) -> None:
    """On 80 committed labelled rows (tests/judge/data) the judge gives the verdicts pinned
    when it last changed, and separates faithful from unfaithful answers above a floor.

    A change of the judge that moves a verdict updates the pins on purpose (the README
    there says how) and is measured on the whole files by ``pytest -m quality``.
    """
    moved = []
    hits = {"unfaithful": 0, "faithful": 0}
    totals = {"unfaithful": 0, "faithful": 0}
    with SAMPLE.open(encoding="utf-8") as rows:
        for line in rows:
            row = json.loads(line)
            judgement = judge.judge(row["question"], row["contexts"], row["response"])
            got = {"status": judgement.status, "verdicts": [c.verdict for c in judgement.claims]}
            if got != row["pinned"]:
                moved.append(f"{row['id']}: pinned {row['pinned']}, now {got}")
            score = judgement.faithfulness
            predicted = "unfaithful" if score is not None and score < 1.0 else "faithful"
            totals[row["label"]] += 1
            hits[row["label"]] += predicted == row["label"]
    assert moved == [], "\n".join(moved)
    assert totals == {"unfaithful": 40, "faithful": 40}
    assert _balanced(hits, totals) >= SAMPLE_FLOOR


@pytest.mark.quality
@pytest.mark.parametrize(("name", "task"), list(FLOORS))
def test_balanced_accuracy(judge: OfflineJudge, name: str, task: str | None) -> None:
    """On labelled sets the judge separates faithful from unfaithful answers above a floor."""
    path = DATA / f"{name}.jsonl"
    if not path.is_file():
        pytest.skip(f"{path} is not present")
    hits = {"unfaithful": 0, "faithful": 0}
    totals = {"unfaithful": 0, "faithful": 0}
    with path.open(encoding="utf-8") as rows:
        for line in rows:
            row = json.loads(line)
            if task is not None and row["task"] != task:
                continue
            judgement = judge.judge(row["question"], row["contexts"], row["response"])
            score = judgement.faithfulness
            predicted = "unfaithful" if score is not None and score < 1.0 else "faithful"
            totals[row["label"]] += 1
            hits[row["label"]] += predicted == row["label"]

    balanced = _balanced(hits, totals)
    assert balanced >= FLOORS[name, task], f"balanced accuracy {balanced:.3f}"


def test_a_pseudonyms_hash_lends_no_number_to_a_claim() -> None:
    """A scrubbed value is one identifier: "99.00 euros" is not borrowed from the digits of
    "<PHONE_99cde984>" (a claim's support depended on the scrub key's random hash)."""
    chunks = [
        "Account owner <EMAIL_c8d4d1f7> (phone <PHONE_99cde984>) pays by card <CARD_f64bda8c>. "
        "Order A107 cost 12.50 euros."
    ]
    said = "<EMAIL_c8d4d1f7> was refunded 99.00 euros on card <CARD_f64bda8c> today."
    [claim] = OfflineJudge().judge("Where is order A107?", chunks, said).claims
    assert claim.verdict != "supported"
    faithful = OfflineJudge().judge("", chunks, "<EMAIL_c8d4d1f7> pays by card <CARD_f64bda8c>.")
    assert faithful.faithfulness == 1.0
