"""The judge cost bench's cascade part: ``FAITHMON_JUDGE=cascade`` against the LLM-only
judge (and RAGAS, when the peers run) on RAGTruth, through the same counting server.

For each trace: whether the cascade needed a call, its calls and prompt tokens, the
same for the LLM-only judge, and the claims the cascade settled offline. Those that
are ``supported`` are checked against RAGTruth's span labels: a settled-supported
claim is right when its sentence overlaps no unsupported span of the response.
Goals (issue 16): at most half the traces need a call, the cascade makes at most
0.5x the LLM-only judge's calls, and settled-supported claims are at least 0.95
precise.
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from judge_cost_mock import CountingJudge
from judge_cost_samples import Sample
from judge_cost_table import Row

from faithmon.judge import OfflineJudge
from faithmon.judge.cascade import CascadeJudge
from faithmon.judge.openai_judge import OpenAIJudge, OpenAIJudgeConfig
from faithmon.model import Claim

RAGTRUTH = (
    Path(__file__).resolve().parents[2] / "shared" / "data" / "faithfulness" / "ragtruth.jsonl"
)
SHARE_GOAL = 0.5
CALLS_GOAL = 0.5
PRECISION_GOAL = 0.95


@dataclass(frozen=True, slots=True)
class Labelled:
    sample: Sample
    spans: tuple[tuple[int, int], ...]
    """Character ranges of the response that RAGTruth labels unsupported."""


def load(path: Path, limit: int | None) -> list[Labelled]:
    rows = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        item = json.loads(line)
        sample = Sample(
            id=item["id"].replace("ragtruth-", "rt"),
            kind=item.get("task", ""),
            question=item.get("question") or "",
            chunks=tuple(item["contexts"]),
            answer=item["response"],
        )
        spans = tuple((int(s["start"]), int(s["end"])) for s in item.get("unsupported_spans", []))
        rows.append(Labelled(sample, spans))
    return rows[:limit] if limit else rows


def _llm(base: str, label: str, sample: Sample, model: str) -> OpenAIJudge:
    return OpenAIJudge(
        OpenAIJudgeConfig(model=model, base_url=f"{base}/{label}/{sample.id}/v1", api_key="x")
    )


def _located(answer: str, claim: Claim, start: int) -> tuple[int, int] | None:
    found = answer.find(claim.text, start)
    if found < 0:
        found = answer.find(claim.text)
    return (found, found + len(claim.text)) if found >= 0 else None


@dataclass(slots=True)
class Precision:
    right: int = 0
    wrong: int = 0
    unplaced: int = 0

    @property
    def value(self) -> float | None:
        judged = self.right + self.wrong
        return self.right / judged if judged else None


def run(
    mock: CountingJudge, base: str, items: Sequence[Labelled], bar: float, model: str
) -> dict[str, Any]:
    """Both judges on every item; the figures and the rows."""
    cascade_rows: list[Row] = []
    llm_rows: list[Row] = []
    precision = Precision()
    confidences = 0
    settled_claims = 0
    claims_total = 0
    for item in items:
        s = item.sample
        cascade = CascadeJudge(OfflineJudge(), _llm(base, "cascade", s, model), bar)
        judged = cascade.judge(s.question, s.chunks, s.answer)
        logged = mock.requests_of("cascade", s.id)
        cursor = 0
        for claim in judged.claims:
            claims_total += 1
            confidences += claim.confidence is not None
            place = _located(s.answer, claim, cursor)
            if place is not None:
                cursor = place[1]
            if claim.stage != "offline":
                continue
            settled_claims += 1
            if claim.verdict != "supported":
                continue
            if place is None:
                precision.unplaced += 1
            elif any(a < place[1] and place[0] < b for a, b in item.spans):
                precision.wrong += 1
            else:
                precision.right += 1
        cascade_rows.append(
            Row(
                s.id,
                len(logged),
                sum(r.prompt_tokens for r in logged),
                judged.faithfulness,
                judged.error,
                {"usage_calls": judged.usage.calls, "stages": [c.stage for c in judged.claims]},
            )
        )
        alone = _llm(base, "llmonly", s, model).judge(s.question, s.chunks, s.answer)
        logged = mock.requests_of("llmonly", s.id)
        llm_rows.append(
            Row(s.id, len(logged), sum(r.prompt_tokens for r in logged), alone.faithfulness)
        )
    called = sum(r.calls > 0 for r in cascade_rows)
    calls, llm_calls = (
        statistics.fmean(r.calls for r in rows) for rows in (cascade_rows, llm_rows)
    )
    tokens, llm_tokens = (
        statistics.fmean(r.prompt_tokens for r in rows) for rows in (cascade_rows, llm_rows)
    )
    share = called / len(items) if items else 0.0
    mismatch = [r.sample for r in cascade_rows if r.extra["usage_calls"] != r.calls]
    return {
        "traces": len(items),
        "bar": bar,
        "claims": claims_total,
        "claims_with_confidence": confidences,
        "claims_settled_offline": settled_claims,
        "share_needing_a_call": share,
        "cascade_calls_mean": calls,
        "cascade_prompt_tokens_mean": tokens,
        "llm_only_calls_mean": llm_calls,
        "llm_only_prompt_tokens_mean": llm_tokens,
        "calls_vs_llm_only": calls / llm_calls if llm_calls else None,
        "tokens_vs_llm_only": tokens / llm_tokens if llm_tokens else None,
        "settled_supported_precision": precision.value,
        "settled_supported": {
            "right": precision.right,
            "wrong": precision.wrong,
            "unplaced": precision.unplaced,
        },
        "usage_mismatch": mismatch,
        "goals": {
            "share_met": share <= SHARE_GOAL,
            "calls_met": (calls / llm_calls <= CALLS_GOAL) if llm_calls else None,
            "precision_met": (
                precision.value >= PRECISION_GOAL if precision.value is not None else None
            ),
        },
        "rows": {
            "cascade": [r.as_json() for r in cascade_rows],
            "llm_only": [r.as_json() for r in llm_rows],
        },
    }


def report(figures: dict[str, Any], ragas_calls: float | None, ragas_tokens: float | None) -> str:
    """The lines the bench prints for the cascade."""
    p = figures["settled_supported_precision"]
    lines = [
        f"cascade on RAGTruth: {figures['traces']} traces, bar {figures['bar']:g}; "
        f"{figures['claims_with_confidence']} of {figures['claims']} offline claims carry a "
        f"confidence, {figures['claims_settled_offline']} settled offline",
        f"- traces needing a call: {figures['share_needing_a_call']:.2f} (goal ≤ {SHARE_GOAL})",
        f"- calls/trace: cascade {figures['cascade_calls_mean']:.2f}, LLM-only "
        f"{figures['llm_only_calls_mean']:.2f} = {_ratio(figures['calls_vs_llm_only'])} "
        f"(goal ≤ {CALLS_GOAL}x)",
        f"- prompt ≈tok/trace: cascade {figures['cascade_prompt_tokens_mean']:,.0f}, LLM-only "
        f"{figures['llm_only_prompt_tokens_mean']:,.0f} = {_ratio(figures['tokens_vs_llm_only'])}",
        "- precision of claims settled offline supported: "
        + (f"{p:.3f}" if p is not None else "n/a (none settled)")
        + f" {figures['settled_supported']} (goal ≥ {PRECISION_GOAL})",
    ]
    if ragas_calls is not None and ragas_tokens is not None:
        lines.append(
            f"- RAGAS on the same traces: {ragas_calls:.2f} calls, {ragas_tokens:,.0f} ≈tok/trace"
        )
    return "\n".join(lines)


def _ratio(value: float | None) -> str:
    return f"{value:.2f}x" if value is not None else "n/a"
