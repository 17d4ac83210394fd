"""The judge cost bench's tables: calls and prompt tokens per trace for each judge,
against RAGAS, and per sample."""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from common import columns, number, ratio
from judge_cost_samples import Sample

CALLS_GOAL = 1
TOKENS_GOAL = 0.3


@dataclass(slots=True)
class Row:
    """One judge on one sample: what the server counted and what the judge said."""

    sample: str
    calls: int
    prompt_tokens: int
    score: float | None
    error: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def as_json(self) -> dict[str, Any]:
        return {
            "sample": self.sample,
            "calls": self.calls,
            "prompt_tokens": self.prompt_tokens,
            "score": self.score,
            "error": self.error,
            **self.extra,
        }


@dataclass(frozen=True, slots=True)
class Summary:
    name: str
    rows: tuple[Row, ...]

    @property
    def calls_mean(self) -> float:
        return statistics.fmean(r.calls for r in self.rows)

    @property
    def calls_max(self) -> int:
        return max(r.calls for r in self.rows)

    @property
    def tokens_mean(self) -> float:
        return statistics.fmean(r.prompt_tokens for r in self.rows)

    @property
    def errors(self) -> int:
        return sum(r.error is not None for r in self.rows)


def table(summaries: Sequence[Summary], baseline: Summary | None, header: str) -> str:
    """Plain-text table in the style of ``common.render``."""
    titles = (
        "judge",
        "calls/trace mean",
        "max",
        "prompt ≈tok/trace mean",
        "vs RAGAS",
        f"≤{CALLS_GOAL} call",
        f"≤{TOKENS_GOAL}x RAGAS tok",
    )
    rows = []
    for s in summaries:
        relative_tokens = s.tokens_mean / baseline.tokens_mean if baseline else None
        is_faithmon = s.name.startswith("faithmon")
        calls_goal = ("met" if s.calls_max <= CALLS_GOAL else "missed") if is_faithmon else ""
        tokens_goal = ""
        if is_faithmon:
            tokens_goal = (
                "n/a (no RAGAS)"
                if relative_tokens is None
                else "met"
                if relative_tokens <= TOKENS_GOAL
                else "missed"
            )
        rows.append(
            (
                s.name,
                number(s.calls_mean),
                str(s.calls_max),
                number(s.tokens_mean),
                ratio(relative_tokens) if relative_tokens is not None else "n/a",
                calls_goal,
                tokens_goal,
            )
        )
    right = (False, True, True, True, True, False, False)
    return "\n".join([header, "", *columns(titles, rows, right)])


def per_sample_table(samples: Sequence[Sample], summaries: Sequence[Summary]) -> str:
    titles = ("sample", "kind", *(f"{s.name.split()[0]} calls/tok" for s in summaries))
    by_judge = [{r.sample: r for r in s.rows} for s in summaries]
    rows = []
    for sample in samples:
        cells = [sample.id, sample.kind]
        for found in by_judge:
            row = found.get(sample.id)
            cells.append(f"{row.calls} / {row.prompt_tokens:,}" if row else "-")
        rows.append(tuple(cells))
    return "\n".join(columns(titles, rows, [i >= 2 for i in range(len(titles))]))
