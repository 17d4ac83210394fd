"""Sentinel runs and judge trust as the read API shows them (they describe the judge, not a
tenant's traffic, so every reader sees them)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from ..model import SentinelResult
from .tables import JudgeTrustRow, SentinelRunRow, SentinelSetRow


@dataclass(frozen=True, slots=True)
class SentinelRun:
    id: int
    set_name: str
    set_version: str
    judge: str
    ran_at: datetime
    state: str
    statistic: float
    result: SentinelResult


@dataclass(frozen=True, slots=True)
class TrustWindow:
    """Evaluations by ``judge`` made in [since, until) are not trusted; until None: still."""

    judge: str
    since: datetime
    until: datetime | None
    reason: str


def run_page(
    session: Session, limit: int, before: int | None = None, judge: str | None = None
) -> tuple[list[SentinelRun], int | None]:
    """Runs newest first, and the id the next page starts below (None on the last page)."""
    query = (
        select(SentinelRunRow, SentinelSetRow.name, SentinelSetRow.version)
        .join(SentinelSetRow, SentinelSetRow.id == SentinelRunRow.set_id)
        .order_by(SentinelRunRow.id.desc())
        .limit(limit + 1)
    )
    if before is not None:
        query = query.where(SentinelRunRow.id < before)
    if judge is not None:
        query = query.where(SentinelRunRow.judge == judge)
    rows = session.execute(query).all()
    runs = [
        SentinelRun(
            run.id,
            name,
            version,
            run.judge,
            run.ran_at,
            run.state,
            run.statistic,
            SentinelResult.from_json(run.results),
        )
        for run, name, version in rows[:limit]
    ]
    return runs, rows[limit - 1][0].id if len(rows) > limit else None


def trust_windows(session: Session) -> list[TrustWindow]:
    return [
        TrustWindow(row.judge, row.untrusted_since, row.untrusted_until, row.reason)
        for row in session.scalars(select(JudgeTrustRow).order_by(JudgeTrustRow.judge))
    ]
