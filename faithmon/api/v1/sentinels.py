"""``/api/v1/sentinels``: sentinel runs per judge configuration, newest first, and which
configurations are trusted. They describe the judge, not a tenant: every reader sees them."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

from fastapi import APIRouter, Query
from pydantic import BaseModel, Field

from ...store import Sessions, reads_sentinels
from ._common import MAX_PAGE, Page, Text, encode_cursor, id_cursor


class SentinelRunOut(BaseModel):
    id: int
    set: str
    version: str
    judge: str = Field(description="The judge configuration's fingerprint.")
    ran_at: datetime
    state: Literal["good", "drift"] | str
    statistic: float
    cases: int
    supported: int
    unsupported: int
    false_flags: int = Field(description="Known-supported cases the judge called unfaithful.")
    misses: int = Field(description="Known-unsupported cases the judge called faithful.")
    judge_errors: int
    score_gap: float = Field(description="Mean score on supported minus on unsupported cases.")
    accuracy: float
    false_flag_rate: float
    miss_rate: float


class TrustOut(BaseModel):
    judge: str
    trusted: bool = Field(description="False while sentinels show the judge drifting.")
    untrusted_since: datetime
    untrusted_until: datetime | None
    reason: str


class SentinelPage(Page[SentinelRunOut]):
    trust: list[TrustOut] = Field(
        description="Configurations that lost trust (those never listed are trusted)."
    )


def sentinel_page(
    sessions: Sessions, judge: str | None, limit: int, cursor: str | None
) -> SentinelPage:
    """Sentinel runs newest first (the API's view; the dashboard renders the same)."""
    before = id_cursor(cursor)
    with sessions() as session:
        runs, more = reads_sentinels.run_page(session, limit, before, judge)
        windows = reads_sentinels.trust_windows(session)
    return SentinelPage(
        items=[
            SentinelRunOut(
                id=r.id,
                set=r.set_name,
                version=r.set_version,
                judge=r.judge,
                ran_at=r.ran_at,
                state=r.state,
                statistic=r.statistic,
                cases=r.result.cases,
                supported=r.result.supported,
                unsupported=r.result.unsupported,
                false_flags=r.result.false_flags,
                misses=r.result.misses,
                judge_errors=r.result.judge_errors,
                score_gap=r.result.score_gap,
                accuracy=round(r.result.accuracy, 4),
                false_flag_rate=round(r.result.false_flag_rate, 4),
                miss_rate=round(r.result.miss_rate, 4),
            )
            for r in runs
        ],
        next_cursor=encode_cursor(more) if more is not None else None,
        trust=[
            TrustOut(
                judge=w.judge,
                trusted=w.until is not None,
                untrusted_since=w.since,
                untrusted_until=w.until,
                reason=w.reason,
            )
            for w in windows
        ],
    )


def router(sessions: Sessions) -> APIRouter:
    api = APIRouter(tags=["sentinels"])

    @api.get("/sentinels", response_model=SentinelPage)
    def list_sentinels(
        judge: Annotated[Text | None, Query(max_length=200)] = None,
        limit: Annotated[int, Query(ge=1, le=MAX_PAGE)] = 50,
        cursor: Annotated[Text | None, Query(max_length=200)] = None,
    ) -> SentinelPage:
        """Sentinel runs newest first, with each judge configuration's trust window."""
        return sentinel_page(sessions, judge, limit, cursor)

    return api
