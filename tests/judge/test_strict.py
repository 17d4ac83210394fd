"""Support is verified, not presumed: each part of a claim must be bound in one place.

The pairs here are the kinds of binding error a lexical judge used to call supported:
a unit or currency swapped, a value or state of another subject, a polarity reversed
behind "yes", an attribute the chunk never gives. ``adversarial.jsonl`` (150 hand-written
pairs, tests/judge/data/README.md) measures each kind with a floor per kind.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from faithmon.judge import OfflineJudge
from faithmon.judge.cascade import CascadeJudge
from faithmon.judge.openai_config import OpenAIJudgeConfig
from faithmon.judge.openai_judge import OpenAIJudge
from faithmon.judge.values import values

ADVERSARIAL = Path(__file__).parent / "data" / "adversarial.jsonl"

BINDING_ERRORS = [
    (["Each tablet contains 250 mg of amoxicillin."],
     "Each tablet contains 250 g of amoxicillin.", "contradicted"),
    (["Used tickets can be exchanged but not reimbursed."],
     "Yes, used tickets are fully reimbursable.", "contradicted"),
    (["The Team plan includes 20 seats. The Starter plan includes 3 seats."],
     "The Starter plan includes 20 seats.", "contradicted"),
    (["The Bergen ferry leaves at 16:30. The Oslo ferry leaves at 09:15."],
     "The Oslo ferry leaves at 16:30.", "contradicted"),
    (["The K9 drill has a 2 Ah battery and a brushless motor."],
     "The K9 drill has a 2 Ah battery and is dishwasher-safe.", "partial"),
    (["Give 3 tablets every 10 hours."],
     "Give 3 tablets every hour and consult a doctor if the fever persists.", "contradicted"),
    (["The plan costs $20 per month."], "The plan costs €20 per month.", "contradicted"),
    (["Room rates start at CHF 180 per night."], "Room rates start at EUR 180 per night.",
     "contradicted"),
    (["On Rivline trains the doors close 30 seconds before departure."],
     "On Rivline trains the doors close 30 minutes before departure.", "contradicted"),
    (["The nightly job automatically runs the database backup."],
     "The nightly job doesn't run the database backup.", "contradicted"),
    (["Visa application V-2210 is under review at the consulate."],
     "Visa application V-2210 has been approved.", "contradicted"),
    (["Parcel Q-88 was delivered to the Dock Road depot on 2 May."],
     "Parcel Q-88 is still on its way to the Dock Road depot.", "contradicted"),
    (["Retry the upload twice before you report the fault."],
     "Retry the upload three times before you report the fault.", "contradicted"),
]  # fmt: skip


@pytest.fixture(scope="module")
def judge() -> OfflineJudge:
    return OfflineJudge()


@pytest.mark.parametrize(("chunks", "answer", "verdict"), BINDING_ERRORS)
def test_a_part_bound_otherwise_is_never_supported(
    judge: OfflineJudge, chunks: list[str], answer: str, verdict: str
) -> None:
    judgement = judge.judge("q", chunks, answer)

    assert [c.verdict for c in judgement.claims] == [verdict]
    if verdict == "contradicted":
        assert judgement.lenient == 0.0
        assert judgement.claims[0].quote in chunks[0]
    else:
        assert judgement.claims[0].missing == "is dishwasher-safe"


@pytest.mark.parametrize(
    ("question", "chunks", "answer"),
    [
        # A title's stop ends no sentence.
        ("Who teaches Section A?",
         ["STAT 200: Section A is taught by Dr. Ana Ruiz; Section B by Prof. Omar Haddad."],
         "Dr. Ana Ruiz teaches Section A."),
        # "Reopens" says open.
        ("When does the museum reopen?",
         ["The Tollard Museum is closed on Mondays and reopens at 10:00 on Tuesday."],
         "The Tollard Museum is closed on Mondays and opens again at 10:00 on Tuesday."),
        # "The Lumen 5 has": a verb after a model number is no unit ("h", hours).
        ("What warranty does the Lumen 3 have?",
         ["The Lumen 3 lamp has a 2-year warranty, while the Lumen 5 has a 3-year warranty."],
         "The Lumen 3 has a 2-year warranty."),
        # Each value from its own clause: the other clause states one of the claim's too.
        ("What is the most Zentol 100 I can take in a day?",
         ["Zentol 100 mg tablets: take 1 tablet every 12 hours with water. Do not exceed 300 mg"
          " in 24 hours.", "Zentol 50 mg tablets: take 1-2 tablets every 8 hours; do not exceed"
          " 4 tablets in 24 hours."],
         "Do not exceed 300 mg of Zentol 100 in 24 hours, taking one tablet every 12 hours with"
         " water."),
        # A sentence beside the answer, with a value and a unit, states its own fact.
        ("How much does the Team plan cost per user?",
         ["The Team plan costs 12 euros per user per month. Annual billing saves 15 percent."],
         "Annual billing saves 15 percent."),
        # A short answer the chunk of the sentence about most of the question gives.
        ("How many days of leave does a 50% part-timer get?",
         ["Full-time staff get 30 days of leave; part-time staff get a pro-rata amount, e.g. 15"
          " days at 50% and 24 days at 80%."], "15"),
    ],
)  # fmt: skip
def test_a_faithful_answer_stays_supported_too(
    judge: OfflineJudge, question: str, chunks: list[str], answer: str
) -> None:
    judgement = judge.judge(question, chunks, answer)

    assert [c.verdict for c in judgement.claims] == ["supported"]


@pytest.mark.parametrize(
    ("chunks", "answer"),
    [
        (["The Team plan includes 20 seats. The Starter plan includes 3 seats."],
         "The Starter plan includes 3 seats."),
        (["Hiltmore Lodge: check-out until 11:00. Late check-out until 13:00 can be requested."],
         "Hiltmore Lodge asks guests to check out by 11:00, or 13:00 if requested."),
        (["Order B22 was handed to Fastpost.", "Tracking updates can take up to 24 hours."],
         "Order B22 is with Fastpost; updates may take up to 24 hours."),
        (["Take 2 tablets daily for 7 days."], "Take 2 tablets per day for 7 days."),
        (["Visa application V-2210 is under review at the consulate."],
         "Visa application V-2210 is still under review."),
        (["Items marked 'Final sale' cannot be returned or exchanged."],
         "No, items marked 'Final sale' can't be returned or exchanged."),
    ],
)  # fmt: skip
def test_a_faithful_answer_stays_supported(
    judge: OfflineJudge, chunks: list[str], answer: str
) -> None:
    """A general statement, the chunk's own subject, "per day" for "daily", a negation
    both sides make: bound, so supported."""
    assert judge.judge("q", chunks, answer).faithfulness == 1.0


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("leaves at 16:30", [(990.0, "clock")]),
        ("opens at 4 pm", [(960.0, "clock")]),
        ("on 3 March", [(303.0, "date")]),
        ("every hour", [(3600.0, "time")]),
        ("250 mg", [(0.25, "mass")]),
        ("500 mcg", [(0.0005, "mass")]),
        ("CHF 180", [(180.0, "chf")]),
        ("30 minutes", [(1800.0, "time")]),
        ("fails twice in a row", [(2.0, "count")]),
        ("three times in a row", [(3.0, "count")]),
        ("Order A17", []),
    ],
)
def test_values_read_times_dates_units_and_skip_codes(
    text: str, found: list[tuple[float, str]]
) -> None:
    assert [(pytest.approx(v.number), v.unit) for v in values(text)] == found


LANES = [
    "At Fenwick Leisure Centre, lap swimming runs from 6:00 to 9:00 and family swimming"
    " runs from 14:00 to 17:00."
]
FINES = [
    "Book loans at the Carrow library last 21 days. Library fines are due within 14 days"
    " of the notice."
]
FLAT = ["The Studio flat comes with a washing machine, a dishwasher and a balcony."]
OVERDRAFTS = [
    "Harlow Bank current accounts offer an arranged overdraft of up to 3,000 GBP.",
    "Harlow Bank student accounts offer an arranged overdraft of up to 500 GBP.",
]
SYRUP = [
    "Calpex syrup comes as 120 mg/5 mL for children and 250 mg/5 mL for adults.",
    "Store below 25 °C.",
]
IBRUFEN = [
    "Ibrufen 200 mg: take 1 to 2 tablets every 4 to 6 hours. Do not take more than 6"
    " tablets in 24 hours.",
    "Ibrufen 400 mg: do not take more than 3 tablets in 24 hours.",
]
PRIZE = ["Entries for the Kestrel photo prize close on 14 April. Winners are announced in June."]
TRAMS = [
    "The last express tram to the stadium leaves at 23:15; the last tram from the stadium"
    " to the centre leaves at 22:40."
]
KETTLES = [
    "The Vela 3 kettle has a 1-year warranty, while the Vela 8 has a 3-year warranty.",
    "Limescale damage is not covered.",
]
VOUCHERS = ["Spring sale: use voucher code SAVE-10 for shoes and SAVE-25 for coats."]
HUT = [
    "The Fenmoor hut sleeps 12 and has bunk beds and a wood stove. It does not have running water."
]
SCOOTER = ["The Trekka 5 scooter reaches up to 45 km on one charge and tops out at 25 km/h."]


@pytest.mark.parametrize(
    ("question", "chunks", "answer", "verdict", "missing"),
    [
        # A value from the clause of another lowercase subject: in one sentence, in two,
        # in another chunk.
        ("When is the pool open for lap swimming?", LANES,
         "Lap swimming at Fenwick is from 14:00 to 17:00.", "contradicted", None),
        ("When are library fines due?", FINES,
         "Library fines are due within 21 days of the notice.", "contradicted", None),
        # "Express" is what the tram is, not an opinion word.
        ("When does the last express tram to the stadium leave?", TRAMS,
         "The final express tram to the stadium departs at 22:40.", "contradicted", None),
        ("How much can I overdraw on a student account?", OVERDRAFTS,
         "A Harlow student account has an arranged overdraft of up to 3,000 GBP.",
         "contradicted", None),
        # A value of another model named in the same sentence: the claim's code votes.
        ("What's the warranty on the Vela 3 kettle?", KETTLES,
         "The Vela 3 has a 3-year warranty.", "contradicted", None),
        # A code of another thing named in the same sentence.
        ("Which voucher code do I use for coats?", VOUCHERS,
         "For coats, use voucher code SAVE-10.", "contradicted", None),
        # An item added to an enumeration whose other items the chunk lists, also first.
        ("What does the Studio flat come with?", FLAT,
         "The Studio flat has a washing machine, a dishwasher, a sauna and a balcony.",
         "partial", "a sauna"),
        ("What does the Studio flat come with?", FLAT,
         "The Studio flat has a private garage, a washing machine, a dishwasher and a balcony.",
         "partial", "a private garage"),
        # An item the context states only under a negation.
        ("What facilities does the Fenmoor hut have?", HUT,
         "The Fenmoor hut has bunk beds, a wood stove and running water.", "contradicted",
         None),
        # The number the sentence gives, in another unit, however the rest is worded.
        ("How far does the Trekka 5 go?", SCOOTER,
         "On a single battery the Trekka 5 can travel roughly 45 miles.", "contradicted", None),
        # Their faithful counterparts.
        ("When is the pool open for lap swimming?", LANES,
         "Lap swimming at Fenwick is from 6:00 to 9:00.", "supported", None),
        ("When are library fines due?", FINES,
         "Library fines are due within 14 days of the notice.", "supported", None),
        ("When does the last express tram to the stadium leave?", TRAMS,
         "The final express tram to the stadium departs at 23:15.", "supported", None),
        ("How much can I overdraw on a student account?", OVERDRAFTS,
         "A Harlow student account has an arranged overdraft of up to 500 GBP.",
         "supported", None),
        ("What does the Studio flat come with?", FLAT,
         "The Studio flat has a washing machine, a dishwasher and a balcony.", "supported", None),
        ("How far does the Trekka 5 go?", SCOOTER,
         "The Trekka 5 scooter reaches up to 45 km on one charge.", "supported", None),
        ("Which voucher code do I use for coats?", VOUCHERS,
         "For coats, use voucher code SAVE-25.", "supported", None),
        ("What's the warranty on the Vela 3 kettle?", KETTLES,
         "The Vela 3 has a 1-year warranty.", "supported", None),
        ("What facilities does the Fenmoor hut have?", HUT,
         "The Fenmoor hut has bunk beds and a wood stove, but no running water.", "supported",
         None),
    ],
)  # fmt: skip
def test_a_value_item_or_unit_from_elsewhere_is_not_supported(
    judge: OfflineJudge,
    question: str,
    chunks: list[str],
    answer: str,
    verdict: str,
    missing: str | None,
) -> None:
    (claim,) = judge.judge(question, chunks, answer).claims

    assert (claim.verdict, claim.missing) == (verdict, missing)
    assert claim.quote is not None
    assert any(claim.quote.rstrip(".") in chunk for chunk in chunks)


# The floor per kind the offline judge keeps on the adversarial pairs (a pair counts
# twice: the faithful answer must score 1.0, the unfaithful one below it). Measured
# with offline/v10; a change that lowers one is a regression of that kind.
FLOORS = {
    "added_predicate": 0.93,
    "currency_swap": 0.96,
    "entity_binding": 0.93,
    "exclusive_state": 0.96,
    "markup_fragment": 0.90,
    "moved_time": 0.93,
    "non_claim_trap": 0.93,
    "number_change": 0.96,
    "polarity": 0.90,
    "unit_swap": 0.93,
}


def test_adversarial_pairs_per_kind(judge: OfflineJudge) -> None:
    right: Counter[str] = Counter()
    total: Counter[str] = Counter()
    for line in ADVERSARIAL.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        for side in ("faithful", "unfaithful"):
            score = judge.judge(row["question"], row["chunks"], row[side]).faithfulness
            flagged = score is not None and score < 1.0
            right[row["kind"]] += flagged == (side == "unfaithful")
            total[row["kind"]] += 1
    assert set(total) == set(FLOORS)
    assert min(total.values()) >= 28
    shares = {kind: right[kind] / total[kind] for kind in total}
    assert all(shares[k] >= FLOORS[k] for k in FLOORS), shares


PLANS = ["The Cobalt plan allows 15 projects. The Zinc plan allows 50 projects."]
LAMPS = ["The Lumo desk lamp costs $30. The Lumo floor lamp costs $35."]
FARES = ["Light fares do not include checked baggage. Flex fares include one checked bag."]


@pytest.mark.parametrize(
    ("question", "chunks", "answer", "faithfulness"),
    [
        ("How many projects can I have on the Cobalt plan?", PLANS, "15", 1.0),
        ("How many projects can I have on the Cobalt plan?", PLANS, "50", 0.0),
        ("How much is the Lumo desk lamp?", LAMPS, "**Price:** $30", 1.0),
        ("How much is the Lumo desk lamp?", LAMPS, "**Price:** $35", 0.0),
        ("Is checked baggage included with a Light fare?", FARES, "No.", 1.0),
        ("Is checked baggage included with a Light fare?", FARES, "Yes.", 0.0),
        ("When does the Cobalt plan renew?", PLANS, "### Renewal\n15 projects", 1.0),
        # A short answer's value from the clause of another subject ("for adults").
        ("Which strength is the children's Calpex syrup?", SYRUP, "<b>250 mg/5 mL</b>", 0.0),
        ("Which strength is the children's Calpex syrup?", SYRUP, "<b>120 mg/5 mL</b>", 1.0),
        # ... or from another chunk, though both name the product.
        (
            "Maximum number of Ibrufen 200 mg tablets in a day?",
            IBRUFEN,
            "**Max per 24 h:** 3 tablets",
            0.0,
        ),
        (
            "Maximum number of Ibrufen 200 mg tablets in a day?",
            IBRUFEN,
            "**Max per 24 h:** 6 tablets",
            1.0,
        ),
        # The question's words are most of, not all, the sentence's: "When ... close?"
        ("When do entries for the Kestrel photo prize close?", PRIZE, "14 April", 1.0),
        ("When do entries for the Kestrel photo prize close?", PRIZE, "**14 June**", 0.0),
    ],
)
def test_a_short_answer_is_read_with_its_question(
    judge: OfflineJudge, question: str, chunks: list[str], answer: str, faithfulness: float
) -> None:
    """A value, a labelled value or a bare yes/no states the question's fact: it is
    bound to the question's subject, and a heading is a label, not a claim."""
    judgement = judge.judge(question, chunks, answer)

    assert judgement.status == "ok"
    assert judgement.faithfulness == faithfulness
    if faithfulness == 0.0:
        assert judgement.lenient == 0.0  # another subject's value: contradicted


def test_a_condition_left_out_is_named_whole() -> None:
    """The condition's amount keeps its thousands separator."""
    judgement = OfflineJudge().judge(
        "Is the fee waived?",
        ["The Plus account fee of £10 per month is waived if you hold £5,000 or more in savings."],
        "The Plus account fee of £10 per month is waived.",
    )

    assert [(c.verdict, c.missing) for c in judgement.claims] == [
        ("partial", "without the condition “if you hold £5,000 or more in savings”")
    ]


def test_a_bare_no_the_context_does_not_deny_is_unsupported(judge: OfflineJudge) -> None:
    """Words of the context holding the question's statement do not prove "no" false,
    nor true: unsupported, with a confidence that sends it to the LLM stage."""
    judgement = judge.judge("Is checked baggage included with a Flex fare?", FARES, "No.")

    assert [c.verdict for c in judgement.claims] == ["unsupported"]
    assert (judgement.claims[0].confidence or 0) < 0.8


FERRY = ["Bicycles are not permitted on the Lakeshore ferry. Prams and wheelchairs are welcome."]


@pytest.mark.parametrize(
    ("answer", "verdict", "score"),
    [
        ("Yes.", "contradicted", 0.0),
        ("Yes, you can take your bicycle on the Lakeshore ferry.", "contradicted", 0.0),
        ("No.", "supported", 1.0),
        ("No, bicycles are not allowed on the Lakeshore ferry.", "supported", 1.0),
    ],
)
def test_what_the_context_forbids_is_not_granted(
    judge: OfflineJudge, answer: str, verdict: str, score: float
) -> None:
    """ "Can I ...?" answered "yes" (or "you can ...") says it is allowed: contradicted
    where the sentence says "not permitted", whichever word of permission each uses."""
    judgement = judge.judge("Can I take my bicycle on the Lakeshore ferry?", FERRY, answer)

    assert [c.verdict for c in judgement.claims] == [verdict]
    assert judgement.faithfulness == score


def test_the_cascade_swallows_no_unfaithful_adversarial_answer(judge: OfflineJudge) -> None:
    """At the default bar, at least 95% of the unfaithful answers reach the LLM (a claim
    uncertain or unverified) or are settled unfaithful offline: the cheap stage settles
    only what it verified."""
    cascade = CascadeJudge(judge, OpenAIJudge(OpenAIJudgeConfig(model="m", api_key="k")), 0.8)
    rows = [json.loads(line) for line in ADVERSARIAL.read_text(encoding="utf-8").splitlines()]
    swallowed = []
    for row in rows:
        claims = judge.judge(row["question"], row["chunks"], row["unfaithful"]).claims
        if all(cascade.settled(c) and c.verdict == "supported" for c in claims):
            swallowed.append(row["id"])
    assert len(swallowed) <= 0.05 * len(rows), swallowed
