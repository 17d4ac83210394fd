"""Score JSONL lines without a database: RAGAS, DeepEval and plain field names.

A context is a string, or an object with ``text`` and, for citation markers to name it
by, ``id``, ``url`` and ``number`` (the number the app displayed).

A line that cannot be read or lacks a field comes back as ``invalid_input``
with the reason, and the run goes on.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from ..model import Judge, Judgement, Relevance, claim_to_json
from .citations import Source
from .contracts import Checked

QUESTION_NAMES = ("user_input", "input", "question")
RESPONSE_NAMES = ("response", "actual_output", "answer")
CONTEXT_NAMES = ("retrieved_contexts", "retrieval_context", "contexts")


def _first(item: dict[str, Any], names: tuple[str, ...]) -> tuple[str | None, Any]:
    for name in names:
        if name in item:
            return name, item[name]
    return None, None


def _source(context: Any) -> Source:
    """A context: its text, or an object with ``text`` and what markers may name it by
    (``id``, ``url``, ``number``: the number the app displayed)."""
    if isinstance(context, str):
        return Source(context)
    if isinstance(context, dict) and isinstance(context.get("text"), str):
        number = context.get("number")
        return Source(
            context["text"],
            id=str(context["id"]) if context.get("id") is not None else None,
            url=context["url"] if isinstance(context.get("url"), str) else None,
            number=number if isinstance(number, int) and not isinstance(number, bool) else None,
        )
    raise ValueError("each context must be a string or an object with a string 'text'")


def sources(item: dict[str, Any]) -> tuple[str, list[Source], str]:
    """(question, contexts, response), the contexts as sources; ValueError if not."""
    _, question = _first(item, QUESTION_NAMES)
    response_name, response = _first(item, RESPONSE_NAMES)
    context_name, contexts = _first(item, CONTEXT_NAMES)
    if response_name is None or not isinstance(response, str):
        raise ValueError(f"'{response_name or RESPONSE_NAMES[0]}' must be a string")
    if context_name is None or not isinstance(contexts, list):
        raise ValueError(f"'{context_name or CONTEXT_NAMES[0]}' must be a list of strings")
    try:
        given = [_source(c) for c in contexts]
    except ValueError as exc:
        raise ValueError(f"'{context_name}': {exc}") from None
    if question is None:
        question = ""
    if not isinstance(question, str):
        raise ValueError("the question must be a string")
    return question, given, response


def relevance_fields(relevance: Relevance | None) -> dict[str, Any]:
    """Context and answer relevance, cause and abstention; each None when not measured."""
    return {
        "context_relevance": relevance.context_relevance if relevance else None,
        "answer_relevance": relevance.answer_relevance if relevance else None,
        "cause": relevance.cause if relevance else None,
        "abstention": relevance.abstention if relevance else None,
    }


def judgement_fields(judgement: Judgement) -> dict[str, Any]:
    out: dict[str, Any] = {
        "faithfulness": judgement.faithfulness,
        "lenient": judgement.lenient,
        "status": judgement.status,
        # The shape the store keeps and `traces show --json` prints, so one reader reads both.
        "claims": [claim_to_json(c) for c in judgement.claims],
        "citation_accuracy": judgement.citation_accuracy,
        "unresolved_citations": judgement.unresolved_citations,
        "policy": [{"rule": f.rule, "text": f.text} for f in judgement.policy],
        "judge": judgement.judge,
        # Always present, null when the judge did not measure them, so a reader of the
        # file need not tell a missing key from an unmeasured one.
        **relevance_fields(judgement.relevance),
        "usage": {
            "calls": judgement.usage.calls,
            "prompt_tokens": judgement.usage.prompt_tokens,
            "completion_tokens": judgement.usage.completion_tokens,
        },
    }
    if judgement.error is not None:
        out["error"] = judgement.error
    return out


def judge_line(judge: Judge, question: str, given: Sequence[Source], response: str) -> Judgement:
    """One line's judgement; a checked judge also reads what the contexts' citation markers
    may name them by."""
    if isinstance(judge, Checked):
        return judge.judge_sources(question, given, response)
    return judge.judge(question, [s.text for s in given], response)


def score_lines(judge: Judge, lines: Iterable[str]) -> Iterator[tuple[dict[str, Any], str | None]]:
    """Each non-blank line back as a dict with the verdicts, and the error if it had one."""
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except ValueError as exc:
            error = f"line {number}: not JSON ({exc})"
            yield {"line": number, "status": "invalid_input", "error": error}, error
            continue
        if not isinstance(item, dict):
            error = f"line {number}: expected a JSON object"
            yield {"line": number, "status": "invalid_input", "error": error}, error
            continue
        try:
            question, given, response = sources(item)
        except ValueError as exc:
            error = f"line {number}: {exc}"
            yield {**item, "line": number, "status": "invalid_input", "error": error}, error
            continue
        yield {**item, **judgement_fields(judge_line(judge, question, given, response))}, None
