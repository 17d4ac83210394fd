"""`faithmon score` writes each line's relevance beside its faithfulness, so a JSONL file
can be diagnosed (retrieval or generation) without a database."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import pytest
from click.testing import CliRunner

from faithmon.cli import main, wiring
from faithmon.config import Settings
from faithmon.model import Claim, Judge, Judgement, Relevance

pytestmark = pytest.mark.one_backend

RELEVANCE = ("context_relevance", "answer_relevance", "cause", "abstention")


class MeasuringJudge:
    """A judge that finds one claim unsupported and blames retrieval."""

    name = "measuring/test"

    def judge(self, question: str, chunks: Sequence[str], answer: str) -> Judgement:
        relevance = Relevance(0.2, 0.9, "retrieval", None)
        return Judgement(self.name, "ok", (Claim(answer, "unsupported"),), relevance=relevance)


def _score(tmp_path: Path) -> list[dict[str, object]]:
    source = tmp_path / "in.jsonl"
    line = {"user_input": "Where is A17?", "response": "It left.", "retrieved_contexts": ["x"]}
    source.write_text(json.dumps(line) + "\n")
    result = CliRunner().invoke(main, ["score", str(source)])
    assert result.exit_code == 0, result.output
    return [json.loads(row) for row in result.stdout.splitlines()]


def test_score_writes_the_relevance_the_judge_measured(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each line has context and answer relevance, cause and abstention as judged."""

    def make_judge(settings: Settings, name: str | None = None) -> Judge:
        return MeasuringJudge()

    monkeypatch.setattr(wiring, "make_judge", make_judge)
    [line] = _score(tmp_path)
    assert [line[k] for k in RELEVANCE] == [0.2, 0.9, "retrieval", None]


def test_score_always_writes_the_relevance_keys(tmp_path: Path) -> None:
    """With the default judge every relevance key is present (null when not measured)."""
    [line] = _score(tmp_path)
    assert set(RELEVANCE) <= set(line)
