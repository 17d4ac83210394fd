"""The worker's controls: blocked judge configurations, judge usage and its daily budget,
rescoring, and cluster-wide job locks."""

from __future__ import annotations

import zlib
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy import Engine, delete, func, select, update
from sqlalchemy.orm import Session

from ..model import Usage
from ._dialect import insert_for, is_postgresql
from .records import PENDING
from .tables import EvaluationRow, JudgeBlockRow, JudgeUsageRow, RecordRow


def block_judge(session: Session, judge: str, reason: str) -> bool:
    """Block a judge configuration; True when this call blocked it (not already blocked)."""
    statement = insert_for(session, JudgeBlockRow).on_conflict_do_nothing(index_elements=["judge"])
    rows = [{"judge": judge, "reason": reason[:2000], "blocked_at": datetime.now(UTC)}]
    return len(session.execute(statement.returning(JudgeBlockRow.id), rows).all()) > 0


def judge_block(session: Session, judge: str) -> str | None:
    row = session.scalars(select(JudgeBlockRow).where(JudgeBlockRow.judge == judge)).first()
    return row.reason if row is not None else None


def judge_blocks(session: Session) -> list[dict[str, Any]]:
    return [
        {"judge": r.judge, "reason": r.reason, "blocked_at": r.blocked_at.isoformat()}
        for r in session.scalars(select(JudgeBlockRow).order_by(JudgeBlockRow.id))
    ]


def unblock(session: Session, judge: str | None = None) -> int:
    statement = delete(JudgeBlockRow)
    if judge is not None:
        statement = statement.where(JudgeBlockRow.judge == judge)
    return int(session.execute(statement).rowcount or 0)  # type: ignore[attr-defined]


def _day(now: datetime) -> datetime:
    return now.astimezone(UTC).replace(hour=0, minute=0, second=0, microsecond=0)


def add_usage(session: Session, judge: str, usage: Usage, now: datetime) -> None:
    if not (usage.calls or usage.prompt_tokens or usage.completion_tokens):
        return
    statement = insert_for(session, JudgeUsageRow).values(
        day=_day(now),
        judge=judge,
        calls=usage.calls,
        prompt_tokens=usage.prompt_tokens,
        completion_tokens=usage.completion_tokens,
    )
    session.execute(
        statement.on_conflict_do_update(
            index_elements=["day", "judge"],
            set_={
                "calls": JudgeUsageRow.calls + statement.excluded.calls,
                "prompt_tokens": JudgeUsageRow.prompt_tokens + statement.excluded.prompt_tokens,
                "completion_tokens": JudgeUsageRow.completion_tokens
                + statement.excluded.completion_tokens,
            },
        )
    )


def tokens_today(session: Session, now: datetime) -> int:
    """Prompt plus completion tokens spent today by every judge, across all workers."""
    total = session.execute(
        select(
            func.coalesce(
                func.sum(JudgeUsageRow.prompt_tokens + JudgeUsageRow.completion_tokens), 0
            )
        ).where(JudgeUsageRow.day == _day(now))
    ).scalar_one()
    return int(total)


def usage_by_day(session: Session) -> list[dict[str, Any]]:
    return [
        {
            "day": r.day.date().isoformat(),
            "judge": r.judge,
            "calls": r.calls,
            "prompt_tokens": r.prompt_tokens,
            "completion_tokens": r.completion_tokens,
        }
        for r in session.scalars(select(JudgeUsageRow).order_by(JudgeUsageRow.day))
    ]


def reset_for_rescore(
    session: Session,
    judge: str,
    since: datetime,
    until: datetime | None = None,
    segment: Mapping[str, str] | None = None,
) -> int:
    """Queue again the records of a window that ``judge`` has not evaluated yet.

    Earlier evaluations by other judge configurations stay, so both can be compared.
    """
    evaluated = select(EvaluationRow.record_id).where(EvaluationRow.judge == judge)
    query = select(RecordRow.id, RecordRow.labels).where(
        RecordRow.started_at >= since,
        RecordRow.status.in_(("scored", "judge_error")),
        RecordRow.id.not_in(evaluated),
    )
    if until is not None:
        query = query.where(RecordRow.started_at < until)
    ids = [
        row.id
        for row in session.execute(query)
        if all(row.labels.get(k) == v for k, v in (segment or {}).items())
    ]
    for start in range(0, len(ids), 500):
        session.execute(
            update(RecordRow)
            .where(RecordRow.id.in_(ids[start : start + 500]))
            .values(status=PENDING, attempts=None, next_attempt_at=None, last_error=None)
        )
    return len(ids)


def _lock_key(name: str) -> int:
    return 7_466_110_000 + zlib.crc32(name.encode())


@contextmanager
def singleton(engine: Engine, name: str) -> Iterator[bool]:
    """Hold a cluster-wide lock named ``name`` while the block runs; yields whether it is held.

    On PostgreSQL a session advisory lock (released with the connection if the
    worker dies); on SQLite always held, since one worker is the supported set-up.
    """
    if not is_postgresql(engine):
        yield True
        return
    with engine.connect() as connection:
        key = _lock_key(name)
        held = bool(
            connection.execute(sa.text("SELECT pg_try_advisory_lock(:k)"), {"k": key}).scalar()
        )
        try:
            yield held
        finally:
            if held:
                connection.execute(sa.text("SELECT pg_advisory_unlock(:k)"), {"k": key})
