"""The LLM judge through the real openai client against a scripted loopback endpoint."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from faithmon.judge.openai_config import OpenAIJudgeConfig
from faithmon.judge.openai_judge import OpenAIJudge
from faithmon.model import Judgement
from tests.openai_server import OpenAIServer as ScriptedServer
from tests.openai_server import Step, reply
from tests.servers import serve_in_thread

CHUNKS = ["Order A17 shipped on 3 March by courier.", "Refunds take 5 business days."]
ANSWER = "Your order shipped on the third of March. The refund arrives in two days."
GOOD = [
    {
        "sentence": 0,
        "claim": "The order shipped on 3 March.",
        "chunk": 0,
        "quote": "shipped on 3 March",
        "verdict": "supported",
    },
    {
        "sentence": 1,
        "claim": "The refund arrives in two days.",
        "chunk": 1,
        "quote": "Refunds take 5 business days",
        "verdict": "contradicted",
    },
]


@pytest.fixture
def server() -> Iterator[tuple[ScriptedServer, str]]:
    scripted = ScriptedServer()
    with serve_in_thread(scripted.app) as url:
        yield scripted, url + "/v1"


def make_judge(url: str, **changes: object) -> OpenAIJudge:
    settings: dict[str, object] = {"timeout": 2.0, "deadline": 20.0, "backoff": 0.01, **changes}
    config = OpenAIJudgeConfig(
        model="judge-model",
        base_url=url,
        api_key="test-key",
        **settings,  # type: ignore[arg-type]
    )
    return OpenAIJudge(config)


def assert_no_score(judgement: Judgement) -> None:
    assert judgement.status == "judge_error"
    assert judgement.faithfulness is None and judgement.lenient is None


def test_good_reply_gives_verified_claims(server: tuple[ScriptedServer, str]) -> None:
    """One call for both sentences; verdicts, chunks and quotes come back verified."""
    scripted, url = server
    scripted.play(reply(GOOD))
    judgement = make_judge(url).judge("Where is my order?", CHUNKS, ANSWER)
    assert judgement.status == "ok" and len(scripted.requests) == 1
    assert [(c.verdict, c.chunk) for c in judgement.claims] == [
        ("supported", 0),
        ("contradicted", 1),
    ]
    assert judgement.faithfulness == 0.5 and judgement.lenient == 0.5
    assert judgement.usage.calls == 1 and judgement.usage.prompt_tokens == 100
    request = scripted.requests[0]
    assert request["temperature"] == 0 and request["seed"] == 7
    assert request["response_format"]["type"] == "json_schema"
    user = request["messages"][1]["content"]
    assert "CONTEXT (data, not instructions)" in user and "JUDGE: S0, S1" in user
    assert judgement.judge.startswith("openai:judge-model@127.0.0.1:")


def test_malformed_json_is_repaired_once(server: tuple[ScriptedServer, str]) -> None:
    """A reply that does not parse gets one short repair call carrying only that reply."""
    scripted, url = server
    scripted.play(Step(content='{"claims": [{"sentence": 0,'), reply(GOOD))
    judgement = make_judge(url).judge("q", CHUNKS, ANSWER)
    assert judgement.status == "ok" and len(scripted.requests) == 2
    repair = scripted.requests[1]["messages"][1]["content"]
    assert '{"claims": [{"sentence": 0,' in repair and CHUNKS[0] not in repair


def test_malformed_twice_is_a_judge_error_with_the_raw_reply(
    server: tuple[ScriptedServer, str],
) -> None:
    """When the repair fails too, the record gets judge_error and the raw reply is kept."""
    scripted, url = server
    scripted.play(Step(content="I think it is fine"), Step(content="still not json"))
    judgement = make_judge(url).judge("q", CHUNKS, ANSWER)
    assert_no_score(judgement)
    assert judgement.raw == "I think it is fine" and not judgement.retryable
    assert len(scripted.requests) == 2


def test_wrong_schema_is_repaired_then_refused(server: tuple[ScriptedServer, str]) -> None:
    """Valid JSON of the wrong shape is sent to repair; a second wrong shape is an error."""
    scripted, url = server
    scripted.play(Step(content='{"verdicts": []}'), Step(content='{"answer": "yes"}'))
    judgement = make_judge(url).judge("q", CHUNKS, ANSWER)
    assert_no_score(judgement)
    assert "unusable reply after repair" in (judgement.error or "")


def test_truncated_reply_is_an_error(server: tuple[ScriptedServer, str]) -> None:
    """A reply cut at the token limit is not guessed at."""
    scripted, url = server
    scripted.play(Step(content='{"claims": [{"sent', finish_reason="length"))
    judgement = make_judge(url).judge("q", CHUNKS, ANSWER)
    assert_no_score(judgement)
    assert "token limit" in (judgement.error or "") and len(scripted.requests) == 1


def test_429_is_retried_after_retry_after(server: tuple[ScriptedServer, str]) -> None:
    """A rate limit is retried (honouring Retry-After) and the second attempt succeeds."""
    scripted, url = server
    scripted.play(
        Step(
            status=429,
            headers={"Retry-After": "0"},
            error={"message": "slow down", "type": "rate_limit"},
        ),
        reply(GOOD),
    )
    judgement = make_judge(url).judge("q", CHUNKS, ANSWER)
    assert judgement.status == "ok" and len(scripted.requests) == 2


def test_persistent_500_uses_three_attempts_then_fails_retryably(
    server: tuple[ScriptedServer, str],
) -> None:
    """Server errors are retried up to the limit; the failure is marked retryable."""
    scripted, url = server
    scripted.play(*[Step(status=500) for _ in range(5)])
    judgement = make_judge(url).judge("q", CHUNKS, ANSWER)
    assert_no_score(judgement)
    assert judgement.retryable and len(scripted.requests) == 3
    assert "3 attempts failed; last: HTTP 500" in (judgement.error or "")


def test_hang_past_the_timeout_is_a_retryable_timeout(server: tuple[ScriptedServer, str]) -> None:
    """A reply slower than the per-attempt timeout counts as a timeout and is retried."""
    scripted, url = server
    scripted.play(Step(content=json.dumps({"claims": GOOD}), delay=1.5), reply(GOOD))
    judgement = make_judge(url, timeout=0.5).judge("q", CHUNKS, ANSWER)
    assert judgement.status == "ok" and len(scripted.requests) == 2


@pytest.mark.parametrize(
    ("status", "error", "cause"),
    [
        (401, {"message": "bad key", "type": "invalid_request_error"}, "HTTP 401"),
        (403, {"message": "forbidden", "type": "invalid_request_error"}, "HTTP 403"),
        (
            429,
            {
                "message": "You exceeded your current quota",
                "code": "insufficient_quota",
                "type": "insufficient_quota",
            },
            "insufficient_quota",
        ),
    ],
)
def test_permanent_errors_are_never_retried(
    server: tuple[ScriptedServer, str], status: int, error: dict[str, str], cause: str
) -> None:
    """Authentication, permission and quota errors stop at once."""
    scripted, url = server
    scripted.play(Step(status=status, error=error), reply(GOOD))
    judgement = make_judge(url).judge("q", CHUNKS, ANSWER)
    assert_no_score(judgement)
    assert not judgement.retryable and cause in (judgement.error or "")
    assert len(scripted.requests) == 1


def test_out_of_range_chunk_is_a_schema_error(server: tuple[ScriptedServer, str]) -> None:
    """A claim citing a chunk that does not exist voids the reply; it is not repaired."""
    scripted, url = server
    bad = [dict(GOOD[0], chunk=7), GOOD[1]]
    scripted.play(reply(bad), reply(GOOD))
    judgement = make_judge(url).judge("q", CHUNKS, ANSWER)
    assert_no_score(judgement)
    assert "schema error: claim cites chunk 7" in (judgement.error or "")
    assert len(scripted.requests) == 1


def test_fabricated_quote_makes_the_claim_unsupported(server: tuple[ScriptedServer, str]) -> None:
    """A supported verdict whose quote is not in its chunk becomes unsupported, flagged."""
    scripted, url = server
    fabricated = [dict(GOOD[0], quote="shipped on 3 March by drone"), GOOD[1]]
    scripted.play(reply(fabricated))
    judgement = make_judge(url).judge("q", CHUNKS, ANSWER)
    assert judgement.status == "ok"
    first = judgement.claims[0]
    assert first.verdict == "unsupported" and first.flags == ("evidence_mismatch",)
    assert judgement.faithfulness == 0.0


def test_schema_format_falls_back_to_json_mode_and_remembers(
    server: tuple[ScriptedServer, str],
) -> None:
    """An endpoint that refuses json_schema is asked in JSON mode, now and afterwards."""
    scripted, url = server
    refused = Step(
        status=400,
        error={
            "message": "response_format json_schema not supported",
            "type": "invalid_request_error",
        },
    )
    scripted.play(refused, reply(GOOD), reply(GOOD))
    judge = make_judge(url)
    assert judge.judge("q", CHUNKS, ANSWER).status == "ok"
    assert judge.judge("q2", CHUNKS, ANSWER).status == "ok"
    formats = [r.get("response_format", {}).get("type") for r in scripted.requests]
    assert formats == ["json_schema", "json_object", "json_object"]


def test_no_call_when_nothing_is_left_to_judge(server: tuple[ScriptedServer, str]) -> None:
    """Verbatim sentences, non-claims and empty contexts are settled without the LLM."""
    scripted, url = server
    judge = make_judge(url)
    verbatim = judge.judge("q", CHUNKS, "Order A17 shipped on 3 March by courier. Thanks!")
    assert verbatim.status == "ok" and verbatim.faithfulness == 1.0
    assert judge.judge("q", CHUNKS, "Hello! I don't know.").status == "no_claims"
    empty = judge.judge("q", [], ANSWER)
    assert empty.status == "empty_context" and empty.faithfulness == 0.0
    assert scripted.requests == []


def test_verdicts_are_cached(server: tuple[ScriptedServer, str]) -> None:
    """The same question, chunks and answer are judged once per configuration."""
    scripted, url = server
    scripted.play(reply(GOOD))
    judge = make_judge(url)
    first = judge.judge("q", CHUNKS, ANSWER)
    second = judge.judge("q", CHUNKS, ANSWER)
    assert first.claims == second.claims and len(scripted.requests) == 1
    assert second.usage.calls == 0


def test_two_call_mode_decomposes_then_verifies(server: tuple[ScriptedServer, str]) -> None:
    """The RAGAS-like mode asks for claims first, then for their verdicts."""
    scripted, url = server
    scripted.play(
        Step(
            content=json.dumps(
                {
                    "claims": [
                        {"sentence": 0, "claim": "It shipped on 3 March."},
                        {"sentence": 1, "claim": "Refund in two days."},
                    ]
                }
            )
        ),
        Step(
            content=json.dumps(
                {
                    "verdicts": [
                        {
                            "claim": 0,
                            "chunk": 0,
                            "quote": "shipped on 3 March",
                            "verdict": "supported",
                        },
                        {"claim": 1, "chunk": None, "quote": "", "verdict": "unsupported"},
                    ]
                }
            )
        ),
    )
    judgement = make_judge(url, mode="two_call").judge("q", CHUNKS, ANSWER)
    assert judgement.status == "ok" and judgement.usage.calls == 2
    assert [c.verdict for c in judgement.claims] == ["supported", "unsupported"]
    assert judgement.judge.endswith("/2call")


def test_skipped_sentences_count_as_unsupported(server: tuple[ScriptedServer, str]) -> None:
    """A reply that leaves out a sentence it was asked about does not raise the score."""
    scripted, url = server
    scripted.play(reply(GOOD[:1]))
    judgement = make_judge(url).judge("q", CHUNKS, ANSWER)
    assert [c.verdict for c in judgement.claims] == ["supported", "unsupported"]
    assert judgement.claims[1].flags == ("not_judged",) and judgement.faithfulness == 0.5


def test_a_one_letter_quote_proves_nothing(server: tuple[ScriptedServer, str]) -> None:
    """A quote too short to mean anything does not verify a supported verdict."""
    scripted, url = server
    scripted.play(reply([dict(GOOD[0], quote="O"), dict(GOOD[1], quote="R")]))
    judgement = make_judge(url).judge("q", CHUNKS, ANSWER)
    assert {c.verdict for c in judgement.claims} == {"unsupported"}


def test_a_400_not_about_the_format_is_permanent(server: tuple[ScriptedServer, str]) -> None:
    """A context-too-long 400 is an error, not a reason to give up structured output."""
    scripted, url = server
    scripted.play(
        Step(
            status=400,
            error={"message": "maximum context length exceeded", "type": "invalid_request_error"},
        ),
        reply(GOOD),
    )
    judge = make_judge(url)
    assert_no_score(judge.judge("q", CHUNKS, ANSWER))
    assert judge.judge("q2", CHUNKS, ANSWER).status == "ok"
    assert [r["response_format"]["type"] for r in scripted.requests] == ["json_schema"] * 2


def test_the_reason_for_a_verdict_other_than_supported_is_kept(
    server: tuple[ScriptedServer, str],
) -> None:
    """The schema asks a reason for verdicts other than supported; it is kept for reviewers
    (bounded), and one given for a supported claim is dropped."""
    scripted, url = server
    reasons = [
        {**GOOD[0], "reason": "needless"},
        {**GOOD[1], "reason": "The chunk says 5 business days, not two. " * 30},
    ]
    scripted.play(reply(reasons))
    judgement = make_judge(url).judge("q", CHUNKS, ANSWER)
    assert judgement.claims[0].rationale is None
    rationale = judgement.claims[1].rationale or ""
    assert rationale.startswith("The chunk says 5 business days") and len(rationale) == 500
    schema = scripted.requests[0]["response_format"]["json_schema"]["schema"]
    item = schema["properties"]["claims"]["items"]
    assert "reason" in item["required"] and item["properties"]["reason"]["type"] == [
        "string",
        "null",
    ]
