"""Queries for sentinel sets, their runs, the trust windows of judge configurations and
their standing (proven, unproven, drifting, blocked, untested)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from ..model import SentinelCase as Case
from ..model import SentinelResult as RunResult
from ..model.standing import JudgeStanding, ProofFloor, SetRun, judge_standing
from ._dialect import insert_for
from .tables import JudgeBlockRow, JudgeTrustRow, SentinelRunRow, SentinelSetRow


def add_set(session: Session, name: str, version: str, cases: Sequence[Case]) -> bool:
    """Store a set version; False when that exact version is already there."""
    statement = insert_for(session, SentinelSetRow).on_conflict_do_nothing(
        index_elements=["name", "version"]
    )
    row = {
        "name": name,
        "version": version,
        "cases": [asdict(c) for c in cases],
        "created_at": datetime.now(UTC),
    }
    return len(session.execute(statement.returning(SentinelSetRow.id), [row]).all()) > 0


def latest_sets(
    session: Session, name: str | None = None
) -> list[tuple[int, str, str, list[Case]]]:
    """(id, name, version, cases) of the newest version of each set (or of ``name``)."""
    query = select(SentinelSetRow).order_by(SentinelSetRow.name, SentinelSetRow.id.desc())
    if name is not None:
        query = query.where(SentinelSetRow.name == name)
    newest: dict[str, SentinelSetRow] = {}
    for row in session.scalars(query):
        newest.setdefault(row.name, row)
    return [
        (
            row.id,
            row.name,
            row.version,
            [Case(**{**c, "chunks": tuple(c["chunks"])}) for c in row.cases],
        )
        for row in newest.values()
    ]


def runs(session: Session, set_id: int, judge: str) -> list[tuple[datetime, RunResult, str]]:
    """(when, result, state) of every run of ``judge`` on a set, oldest first."""
    query = (
        select(SentinelRunRow)
        .where(SentinelRunRow.set_id == set_id, SentinelRunRow.judge == judge)
        .order_by(SentinelRunRow.id)
    )
    return [(r.ran_at, RunResult.from_json(r.results), r.state) for r in session.scalars(query)]


def add_run(
    session: Session,
    set_id: int,
    judge: str,
    result: RunResult,
    statistic: float,
    state: str,
    when: datetime,
) -> None:
    session.add(
        SentinelRunRow(
            set_id=set_id,
            judge=judge,
            ran_at=when,
            results=result.as_json(),
            statistic=statistic,
            state=state,
        )
    )


def list_runs(session: Session) -> list[dict[str, Any]]:
    sets = {row.id: row for row in session.scalars(select(SentinelSetRow))}
    return [
        {
            "set": sets[r.set_id].name,
            "version": sets[r.set_id].version,
            "judge": r.judge,
            "ran_at": r.ran_at.isoformat(),
            "state": r.state,
            "statistic": r.statistic,
            **r.results,
        }
        for r in session.scalars(select(SentinelRunRow).order_by(SentinelRunRow.id))
    ]


def distrust(session: Session, judge: str, since: datetime, reason: str) -> None:
    """Open a trust window for ``judge`` (its evaluations from ``since`` are not trusted)."""
    row = session.scalars(select(JudgeTrustRow).where(JudgeTrustRow.judge == judge)).first()
    if row is None:
        session.add(JudgeTrustRow(judge=judge, untrusted_since=since, reason=reason))
    elif row.untrusted_until is not None:
        row.untrusted_since, row.untrusted_until, row.reason = since, None, reason


def trust_again(session: Session, judge: str, when: datetime) -> None:
    """Close an open trust window: evaluations from now on count again."""
    row = session.scalars(select(JudgeTrustRow).where(JudgeTrustRow.judge == judge)).first()
    if row is not None and row.untrusted_until is None:
        row.untrusted_until = when


def trust_window(session: Session, judge: str) -> tuple[datetime, datetime | None] | None:
    row = session.scalars(select(JudgeTrustRow).where(JudgeTrustRow.judge == judge)).first()
    return None if row is None else (row.untrusted_since, row.untrusted_until)


def status(session: Session, judge: str) -> dict[str, Any]:
    """What production alerts say about the judge: its latest run per set and its trust."""
    sets = {row.id: row for row in session.scalars(select(SentinelSetRow))}
    latest: dict[str, dict[str, Any]] = {}
    newest = (
        select(func.max(SentinelRunRow.id))
        .where(SentinelRunRow.judge == judge)
        .group_by(SentinelRunRow.set_id)
    )
    query = select(SentinelRunRow).where(SentinelRunRow.id.in_(newest)).order_by(SentinelRunRow.id)
    for r in session.scalars(query):
        result = RunResult.from_json(r.results)
        latest[sets[r.set_id].name] = {
            "version": sets[r.set_id].version,
            "ran_at": r.ran_at.isoformat(),
            "state": r.state,
            "accuracy": round(result.accuracy, 4),
        }
    window = trust_window(session, judge)
    trusted = window is None or window[1] is not None
    return {"judge": judge, "trusted": trusted, "sets": latest}


def reference_run(session: Session, set_id: int, judge: str) -> tuple[str, RunResult] | None:
    """The latest good run on a set by another judge configuration: what ``judge`` replaced."""
    query = (
        select(SentinelRunRow)
        .where(
            SentinelRunRow.set_id == set_id,
            SentinelRunRow.judge != judge,
            SentinelRunRow.state == "good",
        )
        .order_by(SentinelRunRow.id.desc())
        .limit(1)
    )
    row = session.scalars(query).first()
    return None if row is None else (row.judge, RunResult.from_json(row.results))


def has_sets(session: Session) -> bool:
    return session.scalars(select(SentinelSetRow.id).limit(1)).first() is not None


def standing(session: Session, judge: str, floor: ProofFloor) -> JudgeStanding:
    """Whether ``judge``'s scores may be interpreted: its latest run on each set against
    ``floor``, its trust window and its block (see :mod:`faithmon.model.standing`)."""
    query = (
        select(SentinelRunRow, SentinelSetRow.name, SentinelSetRow.version)
        .join(SentinelSetRow, SentinelSetRow.id == SentinelRunRow.set_id)
        .where(SentinelRunRow.judge == judge)
        .order_by(SentinelRunRow.id)
    )
    latest: dict[str, SetRun] = {}
    ever_proven = False
    for row, name, version in session.execute(query):
        run = SetRun(name, version, row.ran_at, RunResult.from_json(row.results))
        latest[name] = run  # a newer version of a set replaces the older one's runs
        ever_proven = ever_proven or floor.shortfall(run.result) is None
    trust = session.scalars(select(JudgeTrustRow).where(JudgeTrustRow.judge == judge)).first()
    block = session.scalars(select(JudgeBlockRow).where(JudgeBlockRow.judge == judge)).first()
    return judge_standing(
        judge,
        list(latest.values()),
        floor,
        ever_proven=ever_proven,
        distrust=(
            (trust.untrusted_since, trust.untrusted_until, trust.reason)
            if trust is not None
            else None
        ),
        blocked=block.reason if block is not None else None,
    )


def standings(session: Session, floor: ProofFloor, also: Sequence[str] = ()) -> list[JudgeStanding]:
    """The standing of every configuration with a sentinel run or a block, and of ``also``."""
    names = set(also)
    names.update(session.scalars(select(SentinelRunRow.judge).distinct()))
    names.update(session.scalars(select(JudgeBlockRow.judge).distinct()))
    return [standing(session, name, floor) for name in sorted(names)]
