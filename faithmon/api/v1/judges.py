"""``/api/v1/judges``: every judge configuration the store knows, with its usage per day,
whether it is blocked (401, 403, no quota) or distrusted, its standing (proven, unproven,
drifting, blocked, untested), and the daily token budget left
(what ``faithmon judge status`` shows), with the cost of those tokens at the configured
prices. Every reader sees them."""

from __future__ import annotations

from datetime import UTC, date, datetime
from typing import Any, Literal

from fastapi import APIRouter
from pydantic import BaseModel, Field

from ...store import Sessions, reads_judges, reads_sentinels, work
from ...store import sentinels as store_sentinels
from ._common import ReadOptions


class UsageDay(BaseModel):
    day: date = Field(description="UTC day.")
    calls: int
    prompt_tokens: int
    completion_tokens: int
    cost_usd: float | None = Field(
        description="US dollars for the day's tokens; null: no price is set."
    )


class BlockOut(BaseModel):
    reason: str
    blocked_at: datetime


class JudgeOut(BaseModel):
    judge: str = Field(description="The judge configuration's fingerprint.")
    configured: bool = Field(description="The judge the server is configured with.")
    blocked: BlockOut | None = Field(description="Set until `faithmon judge unblock`.")
    trusted: bool = Field(description="False while sentinels show it drifting.")
    state: Literal["proven", "unproven", "drifting", "blocked", "untested"] = Field(
        description="Its standing: proven by its latest sentinel runs (above the floor), "
        "unproven (below it: its scores are not interpreted, drift alerts held back), "
        "drifting (proven, then lost its sentinels' trust), blocked, or untested (no run)."
    )
    standing: str = Field(description="The standing in one plain line, with its figures.")
    tokens_today: int
    usage: list[UsageDay] = Field(description="Newest day first.")
    total_cost_usd: float | None = Field(
        description="US dollars for every day in `usage`; null: no price is set."
    )


class Budget(BaseModel):
    known: bool = Field(description="False when the server is not told the budget setting.")
    daily_tokens: int | None = Field(description="Null: no budget (or not known).")
    spent_today: int = Field(description="Tokens every judge spent today, across workers.")
    left_today: int | None


class Prices(BaseModel):
    input_per_million_usd: float | None = Field(
        description="FAITHMON_JUDGE_PRICE_INPUT: US dollars per million prompt tokens."
    )
    output_per_million_usd: float | None = Field(
        description="FAITHMON_JUDGE_PRICE_OUTPUT: US dollars per million completion tokens."
    )


class Judges(BaseModel):
    budget: Budget
    prices: Prices = Field(description="The prices costs are computed at; each null: unset.")
    items: list[JudgeOut]


def _cost(options: ReadOptions, prompt_tokens: int, completion_tokens: int) -> float | None:
    # Both prices or no cost: half a price would pass for the whole bill.
    if options.price_input is None or options.price_output is None:
        return None
    return (prompt_tokens * options.price_input + completion_tokens * options.price_output) / 1e6


def judges_view(sessions: Sessions, options: ReadOptions) -> Judges:
    """Judge configurations: usage per day, blocks, trust and the budget left today."""
    now = datetime.now(UTC)
    today = now.date()
    with sessions() as session:
        names = reads_judges.judge_names(session)
        blocks = {b["judge"]: b for b in work.judge_blocks(session)}
        usage = work.usage_by_day(session)
        spent = work.tokens_today(session, now)
        distrusted = {w.judge for w in reads_sentinels.trust_windows(session) if w.until is None}
        standings = {
            name: store_sentinels.standing(session, name, options.proof_floor)
            for name in {*names, *([options.judge] if options.judge else [])}
        }
    if options.judge is not None and options.judge not in names:
        names.append(options.judge)
    per_judge: dict[str, list[dict[str, Any]]] = {}
    for day in reversed(usage):
        per_judge.setdefault(day["judge"], []).append(day)
    items = []
    for name in names:
        days = per_judge.get(name, [])
        block = blocks.get(name)
        items.append(
            JudgeOut(
                judge=name,
                configured=name == options.judge,
                blocked=(
                    BlockOut(
                        reason=block["reason"],
                        blocked_at=datetime.fromisoformat(block["blocked_at"]),
                    )
                    if block is not None
                    else None
                ),
                trusted=name not in distrusted,
                state=standings[name].state,
                standing=standings[name].line,
                tokens_today=sum(
                    d["prompt_tokens"] + d["completion_tokens"]
                    for d in days
                    if d["day"] == today.isoformat()
                ),
                usage=[
                    UsageDay(
                        day=date.fromisoformat(d["day"]),
                        calls=d["calls"],
                        prompt_tokens=d["prompt_tokens"],
                        completion_tokens=d["completion_tokens"],
                        cost_usd=_cost(options, d["prompt_tokens"], d["completion_tokens"]),
                    )
                    for d in days
                ],
                # A judge with no usage (the offline one spends no tokens) costs 0 once
                # prices are set: known to be free, not unknown.
                total_cost_usd=_cost(
                    options,
                    sum(d["prompt_tokens"] for d in days),
                    sum(d["completion_tokens"] for d in days),
                ),
            )
        )
    daily = options.daily_token_budget or None
    return Judges(
        budget=Budget(
            known=options.daily_token_budget is not None,
            daily_tokens=daily,
            spent_today=spent,
            left_today=max(0, daily - spent) if daily is not None else None,
        ),
        prices=Prices(
            input_per_million_usd=options.price_input,
            output_per_million_usd=options.price_output,
        ),
        items=items,
    )


def router(sessions: Sessions, options: ReadOptions) -> APIRouter:
    api = APIRouter(tags=["judges"])

    @api.get("/judges", response_model=Judges)
    def list_judges() -> Judges:
        """Judge configurations: usage per day, blocks, trust and the budget left today."""
        return judges_view(sessions, options)

    return api
