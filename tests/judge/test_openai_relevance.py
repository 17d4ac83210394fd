"""The LLM judge's relevance: asked in the request that judges the claims, read field by
field, and settled by the verdicts; the real openai client against a scripted loopback
endpoint."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from faithmon.judge import OfflineJudge
from faithmon.judge.openai_judge import relevance_of
from faithmon.model import Relevance
from tests.judge.factory import llm
from tests.openai_server import OpenAIServer, Step, reply
from tests.servers import serve_in_thread

CHUNKS = ["Order A17 shipped on 3 March by courier.", "Refunds take 5 business days."]
QUESTION = "When did order A17 ship, and when is my refund due?"
ANSWER = "Your order shipped on the third of March. The refund arrives in two days."
SHIPPED = {
    "sentence": 0,
    "claim": "The order shipped on 3 March.",
    "chunk": 0,
    "quote": "shipped on 3 March",
    "verdict": "supported",
}
TWO_DAYS = {
    "sentence": 1,
    "claim": "The refund arrives in two days.",
    "chunk": 1,
    "quote": "Refunds take 5 business days",
    "verdict": "contradicted",
}
FIVE_DAYS = {**TWO_DAYS, "verdict": "supported"}


@pytest.fixture
def server() -> Iterator[tuple[OpenAIServer, str]]:
    scripted = OpenAIServer()
    with serve_in_thread(scripted.app) as url:
        yield scripted, url + "/v1"


def test_the_claims_request_asks_for_relevance_and_reads_it(
    server: tuple[OpenAIServer, str],
) -> None:
    """One request judges the claims and rates the answer; the prompt that asks is v3,
    named in the judge's fingerprint."""
    scripted, url = server
    scripted.play(
        reply(
            [SHIPPED, TWO_DAYS],
            context_relevance=0.9,
            answer_relevance=0.85,
            cause="generation",
            abstention=None,
        )
    )
    judge = llm(url)
    judgement = judge.judge(QUESTION, CHUNKS, ANSWER)
    assert judgement.status == "ok" and len(scripted.requests) == 1
    assert [c.verdict for c in judgement.claims] == ["supported", "contradicted"]
    assert judgement.relevance == Relevance(0.9, 0.85, "generation", None)
    request = scripted.requests[0]
    schema = request["response_format"]["json_schema"]["schema"]
    assert schema["required"] == [
        "claims",
        "context_relevance",
        "answer_relevance",
        "cause",
        "abstention",
    ]
    assert schema["properties"]["cause"]["enum"] == ["retrieval", "generation", None]
    assert "context_relevance, from 0 to 1" in request["messages"][0]["content"]
    assert "/faithmon.judge/v3#" in judge.name


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        ({}, None),
        (
            {"context_relevance": 1.7, "answer_relevance": "0.6", "cause": "the retriever"},
            Relevance(None, 0.6, None, None),
        ),
        (
            {"context_relevance": True, "answer_relevance": -0.2, "abstention": 5},
            None,
        ),
        (
            {"context_relevance": "high", "answer_relevance": 1e999, "cause": " Retrieval "},
            Relevance(None, None, "retrieval", None),
        ),
    ],
)
def test_a_broken_relevance_field_is_none_and_the_claims_stand(
    server: tuple[OpenAIServer, str], fields: dict[str, Any], expected: Relevance | None
) -> None:
    """A field left out, off the 0-1 scale or outside its words is None on its own; the
    claims beside it stand, with no repair call."""
    scripted, url = server
    scripted.play(Step(content=json.dumps({"claims": [SHIPPED, TWO_DAYS], **fields})))
    judgement = llm(url).judge(QUESTION, CHUNKS, ANSWER)
    assert judgement.status == "ok" and len(scripted.requests) == 1
    assert judgement.faithfulness == 0.5
    assert judgement.relevance == expected


def test_relevance_of_never_raises() -> None:
    """Whatever a reply holds where the relevance should be, reading it does not raise."""
    odd: list[object] = [None, [], {}, "", "nan", float("nan"), 10**400, 0, 1]
    for value in odd:
        fields = dict.fromkeys(("context_relevance", "answer_relevance", "cause"), value)
        relevance_of({**fields, "abstention": value}, QUESTION)
    assert relevance_of({"context_relevance": 0, "answer_relevance": 1}, QUESTION) == Relevance(
        0.0, 1.0
    )
    assert relevance_of({"context_relevance": 0.5}, "  ") is None


def test_a_faithful_answer_has_no_cause_whatever_the_model_says(
    server: tuple[OpenAIServer, str],
) -> None:
    """Every claim supported: the cause the model gave is dropped, its scores kept."""
    scripted, url = server
    scripted.play(
        reply([SHIPPED, FIVE_DAYS], context_relevance=1, answer_relevance=0.7, cause="retrieval")
    )
    judgement = llm(url).judge(QUESTION, CHUNKS, ANSWER)
    assert judgement.faithfulness == 1.0
    assert judgement.relevance == Relevance(1.0, 0.7, None, None)


def test_a_cause_left_out_follows_the_retrieval_rule(server: tuple[OpenAIServer, str]) -> None:
    """An unfaithful answer the model gave no cause takes the retrieval rule's, from the
    context relevance it gave: below the bar, retrieval."""
    scripted, url = server
    scripted.play(reply([SHIPPED, TWO_DAYS], context_relevance=0.2, cause=None))
    judgement = llm(url).judge(QUESTION, CHUNKS, ANSWER)
    assert judgement.relevance == Relevance(0.2, None, "retrieval", None)


def test_a_cached_verdict_keeps_its_relevance(server: tuple[OpenAIServer, str]) -> None:
    """The same trace judged again costs no call and says the same relevance."""
    scripted, url = server
    scripted.play(reply([SHIPPED, TWO_DAYS], context_relevance=0.8, cause="generation"))
    judge = llm(url)
    first = judge.judge(QUESTION, CHUNKS, ANSWER)
    again = judge.judge(QUESTION, CHUNKS, ANSWER)
    assert again.usage.calls == 0 and len(scripted.requests) == 1
    assert again.relevance == first.relevance == Relevance(0.8, None, "generation")


def test_without_a_call_the_word_measures_say_it(server: tuple[OpenAIServer, str]) -> None:
    """An abstention, an empty context and an answer the pre-checks settle cost no call:
    their relevance is the offline judge's word measures, as that judge gives them."""
    scripted, url = server
    judge, offline = llm(url), OfflineJudge()
    declined = judge.judge(QUESTION, CHUNKS, "I could not find that.")
    assert declined.status == "no_claims"
    assert declined.relevance is not None and declined.relevance.abstention == "missed"
    off_topic = judge.judge("What is the warranty period?", CHUNKS, "I could not find that.")
    assert off_topic.relevance is not None and off_topic.relevance.abstention == "correct"
    empty = judge.judge(QUESTION, [], ANSWER)
    assert empty.relevance is not None and empty.relevance.cause == "retrieval"
    copied = judge.judge(QUESTION, CHUNKS, CHUNKS[0])
    assert copied.faithfulness == 1.0
    assert copied.relevance == offline.judge(QUESTION, CHUNKS, CHUNKS[0]).relevance
    assert scripted.requests == []


def test_two_call_mode_asks_no_relevance(server: tuple[OpenAIServer, str]) -> None:
    """Decompose-then-verify requests do not ask: the word measures say it, the cause
    settled by the verdicts the calls gave."""
    scripted, url = server
    scripted.play(
        Step(content=json.dumps({"claims": [{"sentence": 0, "claim": "x"}]})),
        Step(
            content=json.dumps(
                {"verdicts": [{"claim": 0, "chunk": None, "quote": "", "verdict": "unsupported"}]}
            )
        ),
    )
    answer = "Your parcel went by air freight."
    judgement = llm(url, mode="two_call").judge(QUESTION, CHUNKS, answer)
    assert [c.verdict for c in judgement.claims] == ["unsupported"]
    for request in scripted.requests:
        schema = request["response_format"]["json_schema"]["schema"]
        assert "context_relevance" not in schema["properties"]
    measured = OfflineJudge().judge(QUESTION, CHUNKS, answer).relevance
    assert measured is not None and judgement.relevance is not None
    assert judgement.relevance.context_relevance == measured.context_relevance
    assert judgement.relevance.cause in ("retrieval", "generation")
