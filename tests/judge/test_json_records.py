"""Offline judge against records and in summaries: opening hours bound to their days,
reviews summed up in the answer's own words, advice and abstentions that are no claims."""

from __future__ import annotations

import json

import pytest

from faithmon.judge import OfflineJudge, hours
from faithmon.judge.text import normalise


@pytest.fixture
def judge() -> OfflineJudge:
    """The offline judge with its default thresholds."""
    return OfflineJudge()


def record(schedule: dict[str, str] | None, **fields: object) -> str:
    return json.dumps({"name": "Harbour Deli", "city": "Oban", "hours": schedule, **fields})


WEEK = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
EVENINGS = {day: "17:0-21:0" for day in WEEK} | {"Friday": "17:0-22:0", "Saturday": "17:0-22:0"}
NO_MONDAYS = {day: "11:0-21:0" for day in WEEK[1:]}
BRUNCH = {day: "8:0-14:0" for day in WEEK} | {"Sunday": "9:0-15:30"}

# Each pair: the faithful schedule and one whose days and times are all in the record
# but bound wrongly, over the same record.
HOURS_PAIRS = [
    # a later exception overrides the week's hours
    (
        EVENINGS,
        "It is open from 5 pm to 9 pm every day, with extended hours until 10 pm on Fridays "
        "and Saturdays.",
        "It is open from 5 pm to 10 pm every day.",
    ),
    # days first, then times; a range of days
    (
        EVENINGS,
        "Monday to Thursday it opens from 5:00 PM to 9:00 PM, Friday and Saturday from "
        "5:00 PM to 10:00 PM.",
        "Monday to Saturday it opens from 5:00 PM to 9:00 PM.",
    ),
    # a day the record does not list (closed) said to be open
    (
        NO_MONDAYS,
        "The deli is open Tuesday through Sunday from 11 am to 9 pm.",
        "The deli is open seven days a week from 11 am to 9 pm.",
    ),
    # closed on the day it is closed, not on another
    (NO_MONDAYS, "It is closed on Mondays.", "It is closed on Tuesdays."),
    # 24-hour times against 12-hour ones, and a time given after its days
    (
        BRUNCH,
        "On Sundays it serves from 9:00 to 15:30.",
        "On Sundays it serves from 9:00 to 14:00.",
    ),
    # "hours vary" where they do not, and "extended hours" where they are not
    (
        {day: "10:0-20:0" for day in WEEK},
        "The deli is open every day from 10 am to 8 pm.",
        "The deli is open every day, with extended hours on weekends.",
    ),
]


@pytest.mark.parametrize(("schedule", "faithful", "unfaithful"), HOURS_PAIRS)
def test_hours_are_bound_to_their_days(
    judge: OfflineJudge, schedule: dict[str, str], faithful: str, unfaithful: str
) -> None:
    """Right hours pass; the same days and times bound to the wrong days contradict the
    record's hours, quoting them."""
    chunks = [record(schedule)]

    good = judge.judge("", chunks, faithful)
    bad = judge.judge("", chunks, unfaithful)

    assert good.faithfulness == 1.0, [(c.text, c.verdict) for c in good.claims]
    [claim] = bad.claims
    assert claim.verdict == "contradicted"
    assert claim.chunk == 0 and claim.quote is not None
    assert normalise(claim.quote) in normalise(chunks[0])
    assert bad.lenient == 0.0


def test_hours_said_where_the_record_has_none_are_unsupported(judge: OfflineJudge) -> None:
    """A schedule against a record whose hours are null is unsupported, not contradicted."""
    judgement = judge.judge("", [record(None)], "It is open daily from 9 am to 5 pm.")

    assert [c.verdict for c in judgement.claims] == ["unsupported"]


def test_a_day_listed_0_0_is_neither_closed_nor_open(judge: OfflineJudge) -> None:
    """ "0:0-0:0" marks a closed day in one source's format and a day open around the clock
    in another's: a claim about that day is unsupported (left to a reviewer or the LLM),
    never contradicted or supported by the mark; the days the record gives still bind."""
    chunks = [record(NO_MONDAYS | {"Monday": "0:0-0:0"})]
    for said in ("It is closed on Mondays.", "It is open on Mondays from 11 am to 9 pm."):
        assert [c.verdict for c in judge.judge("", chunks, said).claims] == ["unsupported"]
    wrong = judge.judge("", chunks, "It is open every day from 9 am to 5 pm.")
    assert [c.verdict for c in wrong.claims] == ["contradicted"]
    right = judge.judge("", chunks, "The deli is open Tuesday through Sunday from 11 am to 9 pm.")
    assert right.faithfulness == 1.0


def test_a_record_of_unknown_hours_judges_no_schedule() -> None:
    """A record whose every day is "0:0-0:0" has no hours to hold a claim to."""
    assert hours.schedules([record(dict.fromkeys(WEEK, "0:0-0:0"))]) == []


def test_counts_and_ratings_are_not_times() -> None:
    """ "3 to 5 stars" and "2 to 4 people" state no schedule."""
    found = hours.schedules([record(EVENINGS)])

    assert hours.conflict("Reviews give it 3 to 5 stars.", found) is None
    assert hours.conflict("Tables seat 2 to 4 people on Fridays.", found) is None


REVIEWS = record(
    EVENINGS,
    review_info=[
        {
            "review_stars": 5.0,
            "review_text": "Best crab sandwich in town, and the staff are lovely.",
        },
        {"review_stars": 2.0, "review_text": "The chowder was cold and we waited an hour."},
    ],
)


def test_a_summary_of_reviews_may_use_its_own_words(judge: OfflineJudge) -> None:
    """Who wrote the reviews ("customers") and how they were received ("praised",
    "mixed") are the summary's own words; a dish the reviews never name is not."""
    faithful = "Customers have praised the crab sandwich, but reviews of the chowder are mixed."
    unfaithful = "Customers have praised the lobster bisque and the oyster platter."

    assert judge.judge("", [REVIEWS], faithful).faithfulness == 1.0
    assert judge.judge("", [REVIEWS], unfaithful).faithfulness == 0.0


def test_a_closed_compound_finds_its_split_key(judge: OfflineJudge) -> None:
    """ "takeout" is the record's "RestaurantsTakeOut"; "Wi-Fi" its "WiFi"."""
    chunk = json.dumps(
        {"name": "Harbour Deli", "attributes": {"RestaurantsTakeOut": True, "WiFi": "free"}}
    )

    judgement = judge.judge("", [chunk], "Harbour Deli offers takeout.")

    assert [c.verdict for c in judgement.claims] == ["supported"]


@pytest.mark.parametrize(
    "sentence",
    [
        "If the problem persists, consult a qualified electrician or seek professional help.",
        "Therefore, I cannot provide a complete answer based on the given passages.",
        "It is not possible to determine the exact cost from the passages.",
        "Sure, I'd be happy to help you with that!",
        "Passage 3: (unavailable)",
    ],
)
def test_referrals_and_abstentions_are_not_claims(judge: OfflineJudge, sentence: str) -> None:
    """Advice to look elsewhere and saying what the passages lack assert nothing."""
    judgement = judge.judge("How do I fix the fuse box?", ["Turn off the mains first."], sentence)

    assert judgement.status == "no_claims"


def test_a_summary_may_reword_a_little_more_than_an_answer(judge: OfflineJudge) -> None:
    """The same paraphrase, half its words new: unsupported as an answer to a question,
    supported in a summary (no question), where rewording is the point."""
    context = "The council approved the library budget on Monday after a long debate."
    claim = "Following a lengthy discussion, councillors backed the library budget on Monday."

    assert judge.judge("What did the council do?", [context], claim).faithfulness == 0.0
    assert judge.judge("", [context], claim).faithfulness == 1.0
