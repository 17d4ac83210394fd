"""Policy findings per segment: a judge's evaluations made in a recent window, counted by
the segments drift uses, with the rules they hit. What ``policy_violation`` is raised
from; a finding's text never leaves the store here (rule names and counts only)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from ..model import RuleCount, SegmentFindings, segment_key, segments_of
from .tables import EvaluationRow, RecordRow

BATCH = 1000


def _window(session: Session, judge: str, since: datetime) -> Iterator[Any]:
    """``judge``'s evaluations made since ``since``, newest first: a walk down
    ``ix_evaluations_judge_id`` that stops at the first older one, so its cost follows the
    window, not the table (ids and creation times rise together)."""
    before: int | None = None
    while True:
        query = (
            select(
                EvaluationRow.id,
                EvaluationRow.created_at,
                EvaluationRow.policy,
                RecordRow.trace_id,
                RecordRow.labels,
            )
            .join(RecordRow, EvaluationRow.record_id == RecordRow.id)
            .where(EvaluationRow.judge == judge)
            .order_by(EvaluationRow.id.desc())
            .limit(BATCH)
        )
        if before is not None:
            query = query.where(EvaluationRow.id < before)
        rows = session.execute(query).all()
        for row in rows:
            if row.created_at < since:
                return
            yield row
        if len(rows) < BATCH:
            return
        before = rows[-1].id


@dataclass(slots=True)
class _Tally:
    segment: dict[str, str]
    root: str
    evaluations: int = 0
    flagged: set[int] = field(default_factory=set)
    answers: Counter[str] = field(default_factory=Counter)
    findings: Counter[str] = field(default_factory=Counter)
    examples: list[tuple[str, tuple[str, ...]]] = field(default_factory=list)


def policy_findings(
    session: Session,
    judge: str,
    since: datetime,
    dimensions: Sequence[str],
    partition: str | None = None,
    examples: int = 5,
) -> list[SegmentFindings]:
    """Each segment (as :func:`faithmon.model.segments_of` makes them) with an evaluation
    by ``judge`` made since ``since`` that carries policy findings, whatever its status:
    its evaluations in the window, the flagged ones, the rules they hit and the newest
    ``examples`` trace ids. Segments without findings are left out."""
    tallies: dict[str, _Tally] = {}
    for row in _window(session, judge, since):
        segments = segments_of(row.labels or {}, dimensions, partition)
        root = segment_key(segments[0])
        found = Counter(str(f.get("rule", "")) for f in row.policy or ())
        for segment in segments:
            key = segment_key(segment)
            tally = tallies.get(key) or tallies.setdefault(key, _Tally(segment, root))
            tally.evaluations += 1
            if not found:
                continue
            tally.flagged.add(row.id)
            tally.answers.update(found.keys())
            tally.findings.update(found)
            if len(tally.examples) < examples:
                tally.examples.append((row.trace_id, tuple(sorted(found))))
    return [
        SegmentFindings(
            segment=t.segment,
            root=t.root,
            evaluations=t.evaluations,
            flagged=frozenset(t.flagged),
            rules=tuple(
                RuleCount(rule, n, t.findings[rule])
                for rule, n in sorted(t.answers.items(), key=lambda kv: (-kv[1], kv[0]))
            ),
            examples=tuple(t.examples),
        )
        for t in tallies.values()
        if t.flagged
    ]
