"""Shared judge-test helpers: the cascade tests' chunks and sentences, an offline judge with
chosen confidences, and an OpenAI judge for a loopback endpoint."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from faithmon.judge import OfflineJudge
from faithmon.judge.openai_config import OpenAIJudgeConfig
from faithmon.judge.openai_judge import OpenAIJudge
from faithmon.model import Judgement
from faithmon.model.judgement import UNVERIFIED

CHUNKS = [
    "Order A17 shipped on 3 March by courier.",
    "Refunds take 5 business days after the parcel is back.",
]
SURE = "Order A17 shipped on 3 March by courier."
UNSURE = "Your money comes back within a week."


class Confident:
    """The real offline judge, with the confidence a test chooses per claim sentence (a
    stand-in for the calibrated confidences, so these tests do not depend on them), and
    every claim verified (``test_an_unverified_support_goes_to_the_llm`` checks the flag)."""

    def __init__(self, confidences: Mapping[str, float | None]) -> None:
        self.offline = OfflineJudge()
        self.confidences = confidences

    @property
    def name(self) -> str:
        return "confident/" + self.offline.name

    def judge(self, question: str, chunks: Sequence[str], answer: str) -> Judgement:
        judgement = self.offline.judge(question, chunks, answer)
        claims = tuple(
            replace(
                c,
                confidence=self.confidences.get(c.text),
                flags=tuple(f for f in c.flags if f != UNVERIFIED),
            )
            for c in judgement.claims
        )
        return replace(judgement, claims=claims)


def llm(url: str, **changes: object) -> OpenAIJudge:
    settings: dict[str, object] = {"timeout": 2.0, "deadline": 20.0, "backoff": 0.01, **changes}
    return OpenAIJudge(
        OpenAIJudgeConfig(model="judge-model", base_url=url, api_key="k", **settings)  # type: ignore[arg-type]
    )
