"""Every fact is a claim: a sentence is left out only when it holds no factual content
(a bare greeting, thanks, an abstention, a referral), in the offline judge and in the
pre-checks the LLM judge relies on alike."""

from __future__ import annotations

import pytest

from faithmon.judge import OfflineJudge
from faithmon.judge import text as t
from faithmon.judge.precheck import prepare

NON_CLAIMS = [
    "Hello! Thanks for asking.",
    "Hi there!",
    "Thank you for your patience.",
    "I hope this helps!",
    "Sure! Here is a summary of the article:",
    "The passages do not mention the price.",
    "I don't know.",
    "Sorry, I cannot find that. Is there anything else?",
    "Unfortunately, I cannot find that in the documents.",
    "Please consult a doctor.",
    "Let me know if you have other questions.",
    "Sources: [1][2]",
    "Sorry to hear that!",
    "We apologise for the inconvenience.",
    "That sounds really frustrating.",
    "Happy holidays!",
    "Have a great trip!",
    "Kind regards,",
]

# Each pairs a fact with letters or phrases that once hid it.
FACTS = [
    "Hilton guests get a late checkout.",
    "Highway tolls are included.",
    "Heyday prices apply on Mondays.",
    "Thanks to the new plan, refunds take 2 days.",
    "Give 3 tablets every hour and consult a doctor if the fever persists.",
    "Hello, order A17 shipped on 3 March.",
    "Sorry, refunds take 5 days.",
    "Here is a summary: refunds take 5 days.",
    "The warranty lasts 2 years; the price is not specified.",
    "Contact a technician to fit the 5 kW heater.",
    "Hi-fi speakers are 20% off.",
    "Sorry for the delay, your refund of $40 was sent on 3 May.",
    "I apologise for the confusion, but the store closes at 18:00.",
    "Enjoy your meal: the soup costs $4.",
]


@pytest.mark.parametrize("answer", NON_CLAIMS)
def test_a_sentence_without_a_fact_is_no_claim(answer: str) -> None:
    judgement = OfflineJudge().judge("q", ["Order A17 shipped on 3 March."], answer)
    assert judgement.status == "no_claims" and judgement.faithfulness is None
    assert all(t.is_non_claim(s) for s in t.sentences(answer))


@pytest.mark.parametrize("sentence", FACTS)
def test_a_sentence_with_a_fact_is_a_claim_in_both_judges(sentence: str) -> None:
    assert not t.is_non_claim(sentence)
    judgement = OfflineJudge().judge("q", ["Order A17 shipped on 3 March."], sentence)
    assert judgement.status == "ok"
    assert [c.text for c in judgement.claims] == [sentence]
    prepared = prepare(["Order A17 shipped on 3 March."], sentence)
    assert prepared.has_claims and prepared.targets == [0]


def test_the_fact_beside_a_referral_is_what_is_judged() -> None:
    """The dosage decides: right, the claim is supported (the advice to see a doctor is
    not held against it); a tenfold error beside the same advice is caught."""
    answer = "Give 3 tablets every hour and consult a doctor if the fever persists."
    judge = OfflineJudge()
    right = judge.judge("How often?", ["Give 3 tablets every hour."], answer)
    assert [c.verdict for c in right.claims] == ["supported"]
    assert right.claims[0].text == answer
    wrong = judge.judge("How often?", ["Give 1 tablet every 8 hours."], answer)
    assert wrong.faithfulness == 0.0


def test_the_claim_part_keeps_the_words_of_the_fact() -> None:
    assert t.claim_part("Sorry, refunds take 5 days.") == "refunds take 5 days."
    # A leading "yes" or "no" is part of the claim: it carries its polarity.
    assert t.claim_part("Yes, used tickets are refunded.") == "Yes, used tickets are refunded."
    assert t.claim_part("Salt and pepper are included, thank you.") == (
        "Salt and pepper are included"
    )
    assert t.claim_part("Thank you so much!") == ""


@pytest.mark.parametrize("answer", ["It.", "Of the.", "A.", "</div>", "<br/>"])
def test_a_fragment_or_markup_is_never_supported(answer: str) -> None:
    """Words every text has, or a tag, carry nothing a chunk could bear out: "it" is not
    found inside "capital", and "of the" is evidence of nothing."""
    chunk = "The capital of France is Paris, a city of the Seine."
    judgement = OfflineJudge().judge("q", [chunk], answer)
    assert [c.verdict for c in judgement.claims] == ["unsupported"]
    assert prepare([chunk], answer).resolved == {}


def test_a_sentence_found_verbatim_is_found_as_whole_words() -> None:
    assert t.holds_phrase("order a17 shipped on 3 march.", "a17 shipped")
    assert not t.holds_phrase("order a170 shipped on 3 march.", "a17 shipped")
    assert not t.holds_phrase("the capital of france", "it")
