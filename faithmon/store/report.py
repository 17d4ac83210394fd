"""What the HTML report shows, gathered from the store as plain data.

:func:`load_report` reads everything in one session and returns a :class:`ReportData`
of frozen dataclasses and model types, so the renderer never sees a Session or a row.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, Literal

from sqlalchemy import ColumnElement, case, exists, func, select
from sqlalchemy.orm import Session

from ..model import JUDGE_RULES, Alert, StoredRecord, segment_from_key, segment_key
from ..model.standing import JudgeStanding, ProofFloor
from . import baselines as store_baselines
from . import records
from . import sentinels as store_sentinels
from ._dialect import is_postgresql, scanned, time_bucket, time_floor
from .evaluations import UNSUPPORTED, counted
from .reads_alerts import shown_alerts
from .stored_records import load_traces
from .tables import EvaluationRow, RecordRow

# Bucket widths a person reads at a glance; the report takes the first that gives
# at most ``target`` buckets over the traces' time span.
STEPS = tuple(
    timedelta(seconds=s)
    for s in (
        *(0.1, 0.2, 0.5, 1, 2, 5, 10, 15, 30),
        *(60 * m for m in (1, 2, 5, 10, 15, 30)),
        *(3600 * h for h in (1, 2, 3, 6, 12)),
        *(86400 * d for d in (1, 2, 7, 14, 28)),
    )
)
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


@dataclass(frozen=True, slots=True)
class Bucket:
    """Scored records of one segment whose trace started in [start, start + width)."""

    start: datetime
    records: int
    unsupported: int


@dataclass(frozen=True, slots=True)
class Series:
    """One segment's records over time, beside the baseline its detector compares with."""

    segment: Mapping[str, str]
    buckets: tuple[Bucket, ...]
    baseline: tuple[int, int] | None
    """(records, unsupported) of the baseline window; None before it is frozen."""
    baseline_source: Literal["own", "overall"] = "own"
    mixed: bool = False
    """All the traffic of several tenant partitions: no one baseline describes it."""

    @property
    def records(self) -> int:
        return sum(b.records for b in self.buckets)

    @property
    def unsupported(self) -> int:
        return sum(b.unsupported for b in self.buckets)


@dataclass(frozen=True, slots=True)
class ReportData:
    judge: str
    generated_at: datetime
    bucket: timedelta
    series: tuple[Series, ...]
    """The overall segment first, then each alert's segment that has records."""
    alerts: tuple[Alert, ...]
    traces: Mapping[str, StoredRecord] = field(default_factory=dict)
    """The alerts' example traces by trace id, each with its evaluations."""
    baselines: Mapping[str, tuple[int, int]] = field(default_factory=dict)
    """segment key → (records, unsupported) of every frozen baseline."""
    baseline_window: tuple[datetime, datetime] | None = None
    statuses: Mapping[str, int] = field(default_factory=dict)
    """Records by status (scored, pending, no_context, ...)."""
    sparklines: Mapping[str, tuple[Bucket, ...]] = field(default_factory=dict)
    """segment key → its buckets, for each segment the caller asked to be counted."""
    span: tuple[datetime, datetime] | None = None
    """The first and last start of the traces counted."""
    standing: JudgeStanding | None = None
    """Whether the judge's scores may be interpreted (its sentinels against the floor)."""


def bucket_width(start: datetime, end: datetime, target: int = 30) -> timedelta:
    """The narrowest readable width that splits [start, end] into at most ``target`` buckets."""
    span = end - start
    return next((s for s in STEPS if s * target >= span), STEPS[-1])


def floor_time(at: datetime, width: timedelta) -> datetime:
    """``at`` rounded down to a multiple of ``width`` since the epoch (UTC)."""
    return EPOCH + width * ((at - EPOCH) // width)


Tally = list[tuple[int, tuple[str | None, ...], int, int]]
"""(bucket, the labels' values, records, unsupported) per group of :func:`_tally`."""


def _span(
    session: Session, scored: ColumnElement[bool], mine: Sequence[ColumnElement[bool]]
) -> tuple[datetime, datetime] | None:
    """The first and last start of the traces whose evaluation is ``scored``, among
    ``mine``; None when there is none."""
    # Walking the start index until a record with such an evaluation reads a few rows,
    # where min() and max() over the join would read all of them.
    has = exists().where(EvaluationRow.record_id == RecordRow.id, scored)
    first, last = (
        session.scalar(select(RecordRow.started_at).where(has, *mine).order_by(order).limit(1))
        for order in (RecordRow.started_at.asc(), RecordRow.started_at.desc())
    )
    return None if first is None or last is None else (first, last)


def _tally(
    session: Session,
    scored: ColumnElement[bool],
    mine: Sequence[ColumnElement[bool]],
    width: timedelta,
    names: Sequence[str],
) -> Tally:
    """The records among ``mine`` with a ``scored`` evaluation, counted in the database by
    bucket and by the values of the ``names`` labels."""
    labels = [name for name in names if name != "tenant"]
    keys: list[Any] = []
    if is_postgresql(session):
        # A label is cheap to read out of binary JSON; a sort on whole label sets spills.
        keys = [RecordRow.labels[name].as_string() for name in labels]
    elif labels:
        # SQLite parses JSON text at every read: the label sets are grouped as text first,
        # and read once per group.
        keys = [RecordRow.labels]
    # Two steps: grouped by the time cut to a unit (cheap to compute), then by bucket.
    groups = (
        select(
            time_floor(session, RecordRow.started_at, width).label("at"),
            *(key.label(f"key_{i}") for i, key in enumerate(keys)),
            RecordRow.tenant.label("tenant"),
            func.count().label("records"),
            func.sum(case((UNSUPPORTED, 1), else_=0)).label("unsupported"),
        )
        .select_from(RecordRow)
        .join(EvaluationRow, EvaluationRow.record_id == scanned(session, RecordRow.id))
        .where(scored, *mine)
        # By the names: the expressions hold bound values, which PostgreSQL would not
        # match between the select list and the GROUP BY.
        .group_by("at", *(f"key_{i}" for i in range(len(keys))), "tenant")
        .subquery()
    )
    read = {
        name: groups.c[f"key_{i}"] if is_postgresql(session) else groups.c.key_0[name].as_string()
        for i, name in enumerate(labels)
    }
    # The tenant as its column: the label again, and what the tenant filter reads.
    values = [
        (groups.c.tenant if name == "tenant" else read[name]).label(f"label_{i}")
        for i, name in enumerate(names)
    ]
    query = select(
        time_bucket(session, groups.c.at, width).label("bucket"),
        *values,
        func.sum(groups.c.records),
        func.sum(groups.c.unsupported),
    ).group_by("bucket", *(v.name for v in values))
    return [
        (int(bucket), tuple(found), int(n), int(unsupported or 0))
        for bucket, *found, n, unsupported in session.execute(query)
    ]


def bucketize(
    tally: Tally, names: Sequence[str], segment: Mapping[str, str], width: timedelta
) -> tuple[Bucket, ...]:
    """The counts of ``segment`` per bucket, from a tally grouped by ``names`` (every label
    the segment names among them); empty buckets are left out."""
    at = [(names.index(name), value) for name, value in segment.items()]
    counts: dict[int, list[int]] = {}
    for bucket, labels, n, unsupported in tally:
        if all(labels[i] == value for i, value in at):
            found = counts.setdefault(bucket, [0, 0])
            found[0] += n
            found[1] += unsupported
    return tuple(Bucket(EPOCH + width * b, n, u) for b, (n, u) in sorted(counts.items()))


def load_report(
    session: Session,
    judge: str,
    now: datetime | None = None,
    target_buckets: int = 30,
    tenant: str | None = None,
    counted_segments: Sequence[Mapping[str, str]] = (),
    floor: ProofFloor | None = None,
) -> ReportData:
    """Everything the report shows for ``judge``'s evaluations, read in one session; with
    ``tenant``, only that tenant's records and alerts (its overall is ``{tenant: T}``).

    Without ``tenant``, traffic split into tenant partitions is charted per tenant: each
    tenant's overall against its own baseline, beside all the traffic (which has none).
    ``counted_segments`` are counted per bucket too, in ``sparklines``. The judge's
    standing is read against ``floor`` (default: the settings' defaults).
    """
    # Filtered and cut in the database: every open alert, then the newest resolved.
    alerts = shown_alerts(session, tenant)
    overall: dict[str, str] = {} if tenant is None else {"tenant": tenant}
    frozen = store_baselines.load_baselines(session, judge)
    baselines: dict[str, tuple[int, int]] = {}
    window = None
    if frozen is not None:
        baselines = {key: (b.records, b.unsupported) for key, b in frozen.segments.items()}
        if tenant is not None:
            baselines = {
                k: v
                for k, v in baselines.items()
                if (segment_from_key(k) or {}).get("tenant") == tenant
            }
        window = (frozen.start, frozen.end)
    # The outcomes drift counts (evaluations.outcomes), of the tenant's records if given.
    scored = counted(session, judge)
    mine = [RecordRow.tenant == tenant] if tenant is not None else []
    span = _span(session, scored, mine)
    width = bucket_width(*span, target_buckets) if span is not None else STEPS[-1]
    overall_key = segment_key(overall)
    segments: dict[str, Mapping[str, str]] = {overall_key: overall}
    # Each tenant partition's overall: a baseline of the one label ``tenant``.
    tenants = sorted(
        named["tenant"]
        for key in baselines
        if (named := segment_from_key(key)) is not None and named.keys() == {"tenant"}
    )
    if tenant is None:
        for name in tenants:
            segments[segment_key({"tenant": name})] = {"tenant": name}
    for alert in alerts:
        # A judge's alert names the judge and its sentinel set, no label of a record.
        if alert.rule not in JUDGE_RULES:
            segments.setdefault(segment_key(alert.segment), alert.segment)
    wanted = {segment_key(segment): segment for segment in counted_segments}
    names = sorted({name for segment in [*segments.values(), *wanted.values()] for name in segment})
    # Counts, not rates: the chart needs no sampling weights. Counted in the database, as
    # many rows as buckets times label values, whatever the number of records.
    tally = _tally(session, scored, mine, width, names) if span is not None else []
    series = []
    for key, segment in segments.items():
        buckets = bucketize(tally, names, segment, width)
        # A segment without records has no chart.
        if not buckets and key != overall_key:
            continue
        own = baselines.get(key)
        # A segment thin for a baseline of its own is compared with its partition's.
        parent = segment_key({"tenant": segment["tenant"]}) if "tenant" in segment else ""
        mixed = tenant is None and key == overall_key and bool(tenants)
        series.append(
            Series(
                segment=dict(segment),
                buckets=buckets,
                baseline=None if mixed else own if own is not None else baselines.get(parent),
                baseline_source="own" if own is not None or key == overall_key else "overall",
                mixed=mixed,
            )
        )
    example_ids = [
        example["trace_id"]
        for alert in alerts
        for example in alert.details.get("examples", ())
        if isinstance(example, Mapping) and "trace_id" in example
    ]
    return ReportData(
        judge=judge,
        generated_at=now or datetime.now(UTC),
        bucket=width,
        series=tuple(series),
        alerts=alerts,
        traces={
            trace_id: stored
            for trace_id, stored in load_traces(session, example_ids).items()
            if tenant is None or stored.record.labels.get("tenant") == tenant
        },
        baselines=baselines,
        baseline_window=window,
        statuses=records.counts_by_status(session, tenant),
        sparklines={
            key: bucketize(tally, names, segment, width) for key, segment in wanted.items()
        },
        span=span,
        standing=store_sentinels.standing(session, judge, floor or ProofFloor()),
    )
