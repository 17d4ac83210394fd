"""Faithfulness assertions for a team's own tests: the judge of `faithmon gate`, in pytest.

    from faithmon.testing import assert_faithful

    def test_refund_answer():
        answer = my_rag_app.answer("How much is the refund?")
        assert_faithful(answer.text, answer.contexts, question="How much is the refund?")

``assert_faithful`` raises an ``AssertionError`` listing each claim not supported with
its verdict and chunk, as the gate prints them. Without ``judge=``, it uses the judge
``FAITHMON_JUDGE`` names with its ``FAITHMON_JUDGE_*`` settings (the offline judge when
none is set), built once per process, so its verdict cache serves every test. A judge
that cannot score (a timeout, a refused key) raises ``JudgeUnavailable``: the judge's
trouble, never a failed assertion about the answer.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Sequence
from typing import Any

from .gate.report import claim_words
from .judge.jsonl import judge_line, sources
from .model import Judge, Judgement

__all__ = ["JudgeUnavailable", "assert_faithful"]


class JudgeUnavailable(RuntimeError):
    """The judge could not score the answer; its cause is the message."""


@functools.cache
def _configured(environment: tuple[tuple[str, str], ...]) -> Judge:
    # Built from the environment it is given, so a test that changes the settings
    # gets the judge they describe; the same settings reuse one judge and its cache.
    from .cli.wiring import make_judge
    from .config import Settings

    return make_judge(Settings.from_env(dict(environment)))


def configured_judge() -> Judge:
    """The judge the ``FAITHMON_JUDGE*`` settings describe (the one `faithmon gate` uses)."""
    names = ("FAITHMON_", "OPENAI_API_KEY")
    return _configured(tuple(sorted((k, v) for k, v in os.environ.items() if k.startswith(names))))


def assert_faithful(
    response: str,
    contexts: Sequence[Any],
    question: str | None = None,
    minimum: float = 1.0,
    judge: Judge | None = None,
) -> Judgement:
    """Assert that ``response`` is faithful to ``contexts`` (strings, or objects with
    ``text``): its strict score (supported / claims) is at least ``minimum``. Returns
    the judgement.

    An answer with no claim (an abstention, a greeting) has no score, and fails: there
    is nothing to hold to the minimum.
    """
    if not 0 <= minimum <= 1:
        raise ValueError("minimum must be from 0 to 1")
    try:
        asked, given, answer = sources(
            {
                "user_input": question or "",
                "response": response,
                "retrieved_contexts": list(contexts),
            }
        )
    except ValueError as exc:
        raise TypeError(str(exc)) from None
    judge = judge if judge is not None else configured_judge()
    judgement = judge_line(judge, asked, given, answer)
    if judgement.status == "judge_error":
        raise JudgeUnavailable(f"{judge.name} could not score the answer: {judgement.error}")
    score = judgement.faithfulness
    if score is None:
        raise AssertionError(
            f"the answer makes no claim to score ({judgement.status}), so it cannot be held to "
            f"the minimum {minimum:g}"
        )
    if score < minimum - 1e-9:
        listed = "".join(f"\n  - {claim_words(c)}" for c in judgement.not_supported)
        raise AssertionError(
            f"faithfulness {score:.2f} is below {minimum:g} ({judge.name}); not supported:{listed}"
        )
    return judgement
