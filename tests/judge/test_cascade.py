"""The cascade judge: the real offline judge first, then the real openai client against a
scripted loopback endpoint for the uncertain claims only."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping

import pytest

from faithmon.cli import wiring
from faithmon.config import Settings
from faithmon.judge import JudgeOptions, OfflineJudge, make_judge
from faithmon.judge.cascade import CascadeJudge
from faithmon.judge.jsonl import score_lines
from faithmon.judge.openai_config import OpenAIJudgeConfig
from faithmon.judge.openai_judge import OpenAIJudge
from faithmon.model.judgement import UNVERIFIED, Relevance
from tests.judge.factory import CHUNKS, SURE, UNSURE, Confident, llm
from tests.openai_server import OpenAIServer, Step, reply
from tests.servers import serve_in_thread

ALSO_UNSURE = "The courier was late."
ANSWER = f"{SURE} {UNSURE} {ALSO_UNSURE}"


@pytest.fixture
def server() -> Iterator[tuple[OpenAIServer, str]]:
    scripted = OpenAIServer()
    with serve_in_thread(scripted.app) as url:
        yield scripted, url + "/v1"


def cascade(url: str, confidences: Mapping[str, float | None], bar: float = 0.9) -> CascadeJudge:
    return CascadeJudge(Confident(confidences), llm(url), bar)


def test_all_settled_makes_no_call(server: tuple[OpenAIServer, str]) -> None:
    """Claims at or above the bar are settled offline; the trace costs no call."""
    scripted, url = server
    judge = cascade(url, {SURE: 0.95, UNSURE: 0.9, ALSO_UNSURE: 1.0})
    judgement = judge.judge("Where is my order?", CHUNKS, ANSWER)
    assert judgement.status == "ok" and scripted.requests == []
    assert [c.stage for c in judgement.claims] == ["offline"] * 3
    assert judgement.usage.calls == 0 and judgement.judge == judge.name


def test_one_call_carries_only_the_uncertain_sentences(server: tuple[OpenAIServer, str]) -> None:
    """The uncertain sentences (and a None confidence) go in one request with the chunks
    sent once; the settled sentence is not in it, and each claim says its stage."""
    scripted, url = server
    scripted.play(
        reply(
            [
                {
                    "sentence": 0,
                    "claim": "Money comes back within a week.",
                    "chunk": 1,
                    "quote": "Refunds take 5 business days",
                    "verdict": "supported",
                },
                {
                    "sentence": 1,
                    "claim": "The courier was late.",
                    "chunk": None,
                    "quote": "",
                    "verdict": "unsupported",
                },
            ]
        )
    )
    judgement = cascade(url, {SURE: 0.99, UNSURE: 0.4}).judge("Where?", CHUNKS, ANSWER)
    assert len(scripted.requests) == 1
    user = scripted.requests[0]["messages"][1]["content"]
    assert UNSURE in user and ALSO_UNSURE in user and SURE not in user.split("ANSWER")[1]
    assert all(user.count(chunk) == 1 for chunk in CHUNKS)
    assert "JUDGE: S0, S1" in user
    assert [(c.text, c.verdict, c.stage) for c in judgement.claims] == [
        (SURE, "supported", "offline"),
        (UNSURE, "supported", "llm"),
        (ALSO_UNSURE, "unsupported", "llm"),
    ]
    assert judgement.claims[0].confidence == 0.99 and judgement.claims[1].confidence is None
    assert judgement.usage.calls == 1 and judgement.usage.prompt_tokens == 100
    assert judgement.faithfulness == pytest.approx(2 / 3)


def test_an_unverified_support_goes_to_the_llm(server: tuple[OpenAIServer, str]) -> None:
    """A paraphrase whose words the offline judge finds across the context but cannot
    bind in one sentence is flagged unverified, and the cascade asks the LLM about it
    however confident its bin is; a claim copied from a chunk stays offline."""
    scripted, url = server
    scripted.play(
        reply(
            [
                {
                    "sentence": 0,
                    "claim": "Money comes back within a week.",
                    "chunk": 1,
                    "quote": "Refunds take 5 business days",
                    "verdict": "supported",
                }
            ]
        )
    )
    chunks = [*CHUNKS, "Your money is returned to the card you paid with."]
    answer = f"{SURE} Your money comes back to the card within a week of the parcel."
    offline = OfflineJudge().judge("Where?", chunks, answer)
    assert [c.verdict for c in offline.claims] == ["supported", "supported"]
    assert [UNVERIFIED in c.flags for c in offline.claims] == [False, True]

    judgement = CascadeJudge(OfflineJudge(), llm(url), 0.05).judge("Where?", chunks, answer)

    assert len(scripted.requests) == 1
    assert [c.stage for c in judgement.claims] == ["offline", "llm"]


def test_llm_failure_is_the_traces_judge_error(server: tuple[OpenAIServer, str]) -> None:
    """A failed LLM stage gives judge_error as the LLM judge classed it, never a score."""
    scripted, url = server
    judge = CascadeJudge(Confident({SURE: 1.0}), llm(url, max_attempts=1), 0.9)
    scripted.play(Step(status=503))
    failed = judge.judge("q", CHUNKS, ANSWER)
    assert failed.status == "judge_error" and failed.faithfulness is None
    assert failed.retryable and not failed.blocks_judge and failed.judge == judge.name
    assert failed.usage.calls == 0 and failed.claims == ()
    scripted.play(Step(status=401, error={"message": "bad key", "type": "auth"}))
    refused = judge.judge("q", CHUNKS, "The courier was late.")
    assert refused.status == "judge_error" and refused.blocks_judge and not refused.retryable


def test_the_name_names_both_stages_and_the_bar(server: tuple[OpenAIServer, str]) -> None:
    """Another bar, or another LLM, is another judge configuration."""
    _, url = server
    judge = CascadeJudge(OfflineJudge(), llm(url), 0.9)
    assert judge.name == f"cascade({OfflineJudge().name}>{llm(url).name},bar=0.9)"
    assert CascadeJudge(OfflineJudge(), llm(url), 0.8).name != judge.name
    other = OpenAIJudge(OpenAIJudgeConfig(model="other-model", base_url=url, api_key="k"))
    assert CascadeJudge(OfflineJudge(), other, 0.9).name != judge.name
    with pytest.raises(ValueError, match="bar"):
        CascadeJudge(OfflineJudge(), llm(url), 0.0)


def test_settle_offline_says_when_a_call_is_needed(server: tuple[OpenAIServer, str]) -> None:
    """Without calling, the cascade scores a settled trace and declines an uncertain one."""
    scripted, url = server
    judge = cascade(url, {SURE: 0.95})
    settled = judge.settle_offline("q", CHUNKS, SURE)
    assert settled is not None and settled.status == "ok" and settled.usage.calls == 0
    assert [c.stage for c in settled.claims] == ["offline"]
    assert judge.settle_offline("q", CHUNKS, ANSWER) is None
    assert scripted.requests == []


def test_score_output_shows_each_claims_stage(server: tuple[OpenAIServer, str]) -> None:
    """`faithmon score`'s lines carry the stage that decided each claim."""
    scripted, url = server
    scripted.play(
        reply(
            [
                {
                    "sentence": 0,
                    "claim": "c",
                    "chunk": None,
                    "quote": "",
                    "verdict": "unsupported",
                }
            ]
        )
    )
    line = json.dumps(
        {"user_input": "q", "response": f"{SURE} {UNSURE}", "retrieved_contexts": CHUNKS}
    )
    [(item, error)] = list(score_lines(cascade(url, {SURE: 1.0}), [line]))
    assert error is None and item["usage"]["calls"] == 1
    assert [(c["text"], c["stage"]) for c in item["claims"]] == [
        (SURE, "offline"),
        (UNSURE, "llm"),
    ]


def test_the_registry_and_wiring_build_the_cascade(server: tuple[OpenAIServer, str]) -> None:
    """FAITHMON_JUDGE=cascade builds offline > openai with FAITHMON_JUDGE_CASCADE_BAR."""
    _, url = server
    settings = Settings.from_env(
        {
            "FAITHMON_JUDGE": "cascade",
            "FAITHMON_JUDGE_API_KEY": "k",
            "FAITHMON_JUDGE_BASE_URL": url,
            "FAITHMON_JUDGE_MODEL": "judge-model",
            "FAITHMON_JUDGE_CASCADE_BAR": "0.75",
        }
    )
    checked = wiring.make_judge(settings)
    judge = checked.inner
    assert checked.name == judge.name  # the shipped rules add nothing to the name
    assert isinstance(judge, CascadeJudge) and judge.bar == 0.75
    assert isinstance(judge.first, OfflineJudge) and isinstance(judge.second, OpenAIJudge)
    assert judge.name.startswith("cascade(offline/") and judge.name.endswith(",bar=0.75)")
    assert "openai:judge-model@127.0.0.1:" in judge.name
    with pytest.raises(Exception, match="FAITHMON_JUDGE_API_KEY"):
        make_judge("cascade", JudgeOptions(api_key=""))


def test_a_none_confidence_is_uncertain(server: tuple[OpenAIServer, str]) -> None:
    """A claim whose confidence the first stage did not say goes to the LLM."""
    scripted, url = server
    scripted.play(
        reply(
            [{"sentence": 0, "claim": "c", "chunk": 0, "quote": SURE[:-1], "verdict": "supported"}]
        )
    )
    judgement = cascade(url, {SURE: None}, bar=0.1).judge("q", CHUNKS, SURE)
    assert len(scripted.requests) == 1
    assert [(c.verdict, c.stage) for c in judgement.claims] == [("supported", "llm")]


def test_the_default_bar_settles_by_the_calibrated_confidences(
    server: tuple[OpenAIServer, str],
) -> None:
    """With the real confidences and the default bar, a copied claim is settled offline;
    a record's hours bound to the wrong days (a rule seen on fewer than 30 tuning claims,
    so uncalibrated) and a claim of new words (a rule right about a fifth of the time)
    go to the LLM, in one request."""
    scripted, url = server
    scripted.play(
        reply(
            [
                {"sentence": 0, "claim": "h", "chunk": None, "quote": "", "verdict": "unsupported"},
                {"sentence": 1, "claim": "c", "chunk": None, "quote": "", "verdict": "unsupported"},
            ]
        )
    )
    default = Settings.from_env({}).judge_cascade_bar
    assert default == JudgeOptions().cascade_bar
    judge = CascadeJudge(OfflineJudge(), llm(url), default)
    week = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
    chunks = [*CHUNKS, json.dumps({"name": "Deli", "hours": {d: "9:0-17:0" for d in week}})]
    wrong_hours = "The deli is open every day from 9 am to 9 pm."
    invented = "Its chief baker trained in Lyon and Vienna."

    judged = judge.judge("", chunks, f"{SURE} {wrong_hours} {invented}")

    assert [(c.verdict, c.stage) for c in judged.claims] == [
        ("supported", "offline"),
        ("unsupported", "llm"),
        ("unsupported", "llm"),
    ]
    [request] = scripted.requests
    sentences = json.dumps(request).split("ANSWER SENTENCES:")[1]
    assert invented in sentences and wrong_hours in sentences and SURE not in sentences


def test_relevance_comes_from_the_stage_that_decides(server: tuple[OpenAIServer, str]) -> None:
    """Settled offline, the first stage's relevance stands; once the LLM is asked, each
    measure it gave wins and the first stage's fills the rest."""
    scripted, url = server
    question = "When does my money come back?"
    offline = Confident({}).judge(question, CHUNKS, ANSWER).relevance
    assert offline is not None and offline.answer_relevance is not None

    settled = cascade(url, {SURE: 1.0, UNSURE: 1.0, ALSO_UNSURE: 1.0})
    assert settled.judge(question, CHUNKS, ANSWER).relevance == offline

    scripted.play(
        reply(
            [
                {
                    "sentence": 0,
                    "claim": "c",
                    "chunk": 1,
                    "quote": "Refunds take 5 business days",
                    "verdict": "supported",
                },
                {"sentence": 1, "claim": "c", "chunk": None, "quote": "", "verdict": "unsupported"},
            ],
            context_relevance=0.3,
            cause="retrieval",
        )
    )
    judgement = cascade(url, {SURE: 0.99, UNSURE: 0.4}).judge(question, CHUNKS, ANSWER)
    assert len(scripted.requests) == 1 and judgement.unsupported
    assert judgement.relevance == Relevance(0.3, offline.answer_relevance, "retrieval", None)


def test_an_answer_the_llm_finds_faithful_has_no_cause(server: tuple[OpenAIServer, str]) -> None:
    """The first stage blamed an unsupported claim on generation; the LLM supports it (and
    names a cause all the same): the merged claims are faithful, so no cause stands."""
    scripted, url = server
    answer = f"{SURE} {ALSO_UNSURE}"
    offline = Confident({}).judge("How did A17 ship?", CHUNKS, answer).relevance
    assert offline is not None and offline.cause == "generation"
    scripted.play(
        reply(
            [
                {
                    "sentence": 0,
                    "claim": "c",
                    "chunk": 0,
                    "quote": "by courier",
                    "verdict": "supported",
                }
            ],
            context_relevance=0.9,
            cause="generation",
        )
    )
    judgement = cascade(url, {SURE: 1.0}).judge("How did A17 ship?", CHUNKS, answer)
    assert [c.stage for c in judgement.claims] == ["offline", "llm"]
    assert judgement.faithfulness == 1.0
    assert judgement.relevance == Relevance(0.9, offline.answer_relevance, None, None)
