"""`faithmon.testing.assert_faithful`: the gate's judge inside a team's own pytest."""

from __future__ import annotations

import pytest

from faithmon.judge import OfflineJudge
from faithmon.testing import JudgeUnavailable, assert_faithful
from tests.gate.data import FAITHFUL, HALF, LEEDS, SHIPPED, WRONG_DATE
from tests.openai_server import OpenAIServer, Step
from tests.servers import serve_in_thread


def test_a_faithful_answer_passes_and_returns_its_judgement() -> None:
    """Every claim supported: no error, and the judgement comes back to look at."""
    judgement = assert_faithful(FAITHFUL, [LEEDS], question="Where is the office?")
    assert judgement.faithfulness == 1.0


def test_the_message_lists_each_claim_not_supported_with_verdict_and_chunk() -> None:
    """The AssertionError names the score, and each claim with its verdict and chunk."""
    with pytest.raises(AssertionError) as caught:
        assert_faithful(
            f"{WRONG_DATE} It has a rooftop garden.", [LEEDS, SHIPPED], question="When?"
        )
    message = str(caught.value)
    assert message.startswith("faithfulness 0.00 is below 1 (offline/")
    assert message.endswith(
        "not supported:\n"
        '  - "Order A17 shipped on 5 March by courier." contradicted critical '
        '[chunk 1: "Order A17 shipped on 3 March by courier."]\n'
        '  - "It has a rooftop garden." unsupported [no chunk]'
    )


def test_a_minimum_below_one_lets_a_partly_supported_answer_through() -> None:
    """Half supported passes a minimum of 0.5 and fails 0.6; a given judge is used."""
    assert assert_faithful(HALF, [LEEDS], minimum=0.5, judge=OfflineJudge()).faithfulness == 0.5
    with pytest.raises(AssertionError, match=r"faithfulness 0\.50 is below 0\.6"):
        assert_faithful(HALF, [{"text": LEEDS, "id": "doc-1"}], minimum=0.6)


def test_an_answer_with_no_claim_has_no_score_to_hold() -> None:
    """A greeting makes no claim: there is no score, and the assertion says so."""
    with pytest.raises(AssertionError, match="makes no claim to score"):
        assert_faithful("Thanks for asking!", [LEEDS])


def test_a_judge_that_cannot_score_is_not_a_failed_assertion(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The configured LLM judge refused (401): JudgeUnavailable, never an AssertionError."""
    server = OpenAIServer()
    server.play(Step(status=401, error={"message": "Incorrect API key provided"}))
    with serve_in_thread(server.app) as url:
        monkeypatch.setenv("FAITHMON_JUDGE", "openai")
        monkeypatch.setenv("FAITHMON_JUDGE_BASE_URL", url + "/v1")
        monkeypatch.setenv("FAITHMON_JUDGE_API_KEY", "test-key")
        with pytest.raises(JudgeUnavailable, match="could not score the answer: HTTP 401"):
            assert_faithful(HALF, [LEEDS])
    assert len(server.requests) == 1
