"""What the HTML report shows, gathered from the store as plain data.

:func:`load_report` reads everything in one session and returns a :class:`ReportData`
of frozen dataclasses and model types, so the renderer never sees a Session or a row.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Literal

from sqlalchemy.orm import Session

from ..model import Alert, Outcome, StoredRecord, segment_key, visible_to
from . import alerts as store_alerts
from . import baselines as store_baselines
from . import evaluations, records
from .traces import load_traces

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


def bucket_width(start: datetime, end: datetime, target: int = 30) -> timedelta:
    """The narrowest readable width that splits [start, end] into at most ``target`` buckets."""
    span = end - start
    return next((s for s in STEPS if s * target >= span), STEPS[-1])


def floor_time(at: datetime, width: timedelta) -> datetime:
    """``at`` rounded down to a multiple of ``width`` since the epoch (UTC)."""
    return EPOCH + width * ((at - EPOCH) // width)


def bucketize(
    outcomes: Sequence[Outcome], segment: Mapping[str, str], width: timedelta
) -> tuple[Bucket, ...]:
    """Counts per bucket of the outcomes in ``segment``; empty buckets are left out."""
    tally: dict[datetime, list[int]] = {}
    for outcome in outcomes:
        if all(outcome.labels.get(k) == v for k, v in segment.items()):
            counts = tally.setdefault(floor_time(outcome.at, width), [0, 0])
            counts[0] += 1
            counts[1] += outcome.unsupported
    return tuple(Bucket(start, n, u) for start, (n, u) in sorted(tally.items()))


def load_report(
    session: Session,
    judge: str,
    now: datetime | None = None,
    target_buckets: int = 30,
    tenant: str | None = None,
) -> ReportData:
    """Everything the report shows for ``judge``'s evaluations, read in one session; with
    ``tenant``, only that tenant's records and alerts (its overall is ``{tenant: T}``)."""
    # Counts, not rates: the chart needs no sampling weights.
    outcomes = evaluations.outcomes(session, judge, evidence=False)
    alerts = tuple(a for a in store_alerts.list_alerts(session) if visible_to(a, tenant))
    overall: dict[str, str] = {}
    if tenant is not None:
        outcomes = [o for o in outcomes if o.labels.get("tenant") == tenant]
        overall = {"tenant": tenant}
    frozen = store_baselines.load_baselines(session, judge)
    baselines: dict[str, tuple[int, int]] = {}
    window = None
    if frozen is not None:
        baselines = {key: (b.records, b.unsupported) for key, b in frozen.segments.items()}
        if tenant is not None:
            mark = f"tenant={tenant}"
            baselines = {k: v for k, v in baselines.items() if mark in k.split(",")}
        window = (frozen.start, frozen.end)
    width = bucket_width(outcomes[0].at, outcomes[-1].at, target_buckets) if outcomes else STEPS[-1]
    overall_key = segment_key(overall)
    segments: dict[str, Mapping[str, str]] = {overall_key: overall}
    for alert in alerts:
        segments.setdefault(segment_key(alert.segment), alert.segment)
    series = []
    for key, segment in segments.items():
        buckets = bucketize(outcomes, segment, width)
        # Segments that name no record labels (a judge, a sentinel set) have no chart.
        if not buckets and key != overall_key:
            continue
        own = baselines.get(key)
        series.append(
            Series(
                segment=dict(segment),
                buckets=buckets,
                baseline=own if own is not None else baselines.get(overall_key),
                baseline_source="own" if own is not None or key == overall_key else "overall",
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
    )
