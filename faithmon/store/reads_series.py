"""One segment's scored records per hour or day, counted in the database: the read API's
series and the segment page's chart.

The records are the outcomes drift counts (``evaluations.counted``), matched to the
segment's labels as the trace list matches them (``reads_traces.labels_match``), within
a window: a read fetches one row per bucket and reads no record outside the window.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import case, func, select, type_coerce
from sqlalchemy.orm import Session

from ._dialect import scanned, time_floor
from .evaluations import UNSUPPORTED, counted
from .reads_traces import critical_unsupported, labels_match
from .tables import EvaluationRow, RecordRow, UTCDateTime


@dataclass(frozen=True, slots=True)
class SeriesBucket:
    """Scored records of the segment whose trace started in [start, start + width)."""

    start: datetime
    records: int
    unsupported: int
    """Records whose answer is unsupported (``rules.answer_unsupported``)."""
    critical: int
    """Records with a critical claim not supported (``reads_traces.critical_unsupported``)."""


def segment_series(
    session: Session,
    judge: str,
    labels: Mapping[str, str],
    width: timedelta,
    since: datetime,
    until: datetime | None = None,
) -> list[SeriesBucket]:
    """The ``judge``'s counted outcomes of the records with every one of ``labels`` that
    started in [since, until) (no end without ``until``), per bucket of ``width`` (an hour
    or a day: a unit a time is cut to), oldest first; empty buckets are left out."""
    critical = critical_unsupported(session, EvaluationRow.id, EvaluationRow.faithfulness)
    # The start cut to the bucket's unit is the bucket's start, a time again on both
    # backends (SQLite cuts its text, which the column's type reads back).
    start = type_coerce(time_floor(session, RecordRow.started_at, width), UTCDateTime())
    query = (
        select(
            start.label("start"),
            func.count().label("records"),
            func.sum(case((UNSUPPORTED, 1), else_=0)).label("unsupported"),
            func.sum(case((critical, 1), else_=0)).label("critical"),
        )
        .select_from(RecordRow)
        # Records are read by the start (or tenant and start) index within the window,
        # and each one's evaluation looked up, never the reverse (see ``scanned``).
        .join(EvaluationRow, EvaluationRow.record_id == scanned(session, RecordRow.id))
        .where(counted(session, judge), RecordRow.started_at >= since)
        .where(*labels_match(session, labels))
        # By the name: the expression holds bound values, which PostgreSQL would not
        # match between the select list and the GROUP BY.
        .group_by("start")
        .order_by("start")
    )
    if until is not None:
        query = query.where(RecordRow.started_at < until)
    return [
        SeriesBucket(at, int(n), int(unsupported or 0), int(bad or 0))
        for at, n, unsupported, bad in session.execute(query)
    ]
