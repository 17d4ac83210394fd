"""Judge configurations the store has heard of, for the read API's judges view (their
usage, blocks and budget are read by ``work``, as ``faithmon judge status`` does)."""

from __future__ import annotations

from sqlalchemy import select, union
from sqlalchemy.orm import Session

from .tables import EvaluationRow, JudgeBlockRow, JudgeTrustRow, JudgeUsageRow, SentinelRunRow


def judge_names(session: Session) -> list[str]:
    """Every judge fingerprint that evaluated, spent, was blocked, ran sentinels or lost trust."""
    names = union(
        *(
            select(column).distinct()
            for column in (
                EvaluationRow.judge,
                JudgeUsageRow.judge,
                JudgeBlockRow.judge,
                JudgeTrustRow.judge,
                SentinelRunRow.judge,
            )
        )
    )
    return sorted(str(name) for name in session.scalars(select(names.subquery().c[0])))
