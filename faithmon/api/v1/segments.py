"""``/api/v1/segments``: each drift detector's baseline, current rate with its interval,
CUSUM, threshold and state (what ``faithmon drift status`` computes: the worker's own
detectors, as its last run read them), and one segment's rate per hour or day.

A segment is named in a URL by its canonical text: ``overall``, ``route=billing``, or
``route=billing,tenant=acme`` (label names sorted, as alerts name them; a ``%``, ``,`` or
``=`` in a name or value is written ``%25``, ``%2C``, ``%3D``, and the text is then
percent-encoded into the path like any other).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Annotated, Any, Literal, cast

from fastapi import APIRouter, Depends, Path, Query
from pydantic import BaseModel, Field

from ... import drift
from ...model import Cause, segment_from_key, segment_key
from ...model.segment_state import segment_state
from ...store import Sessions, reads_segments, reads_series
from ...store import baselines as store_baselines
from ...store import drift_runs as store_drift_runs
from ...store import evaluations as store_evaluations
from ._common import NOT_FOUND, Caller, ReadOptions, Text, UtcTime, caller, not_found

SEGMENT_HELP = (
    "`overall`, or the segment's labels as `name=value` joined by commas in name order, "
    "e.g. `route=billing` or `route=billing,tenant=acme`. A `%`, `,` or `=` inside a name "
    "or value is written `%25`, `%2C` or `%3D` (`route=a%2Cb` is the route `a,b`), and "
    "the whole is percent-encoded into the path as any text is (`route=a%252Cb`)."
)
State = Literal["ok", "pending", "firing", "folded", "explained"]
JudgeParam = Annotated[
    Text | None,
    Query(max_length=200, description="A judge configuration; default: the configured one."),
]


class Detector(BaseModel):
    stream: Literal["unsupported", "critical", "citation", "retrieval"] = Field(
        description="Records with an unsupported claim, with a critical one, (among "
        "answers that cite) with a wrong or unresolved citation, or (among answers whose "
        "context relevance was measured) whose chunks miss what the question asks."
    )
    baseline_rate: float
    baseline_interval: list[float] = Field(description="95% Wilson interval.")
    baseline_records: int
    baseline_source: Literal["own", "overall"]
    records: int = Field(description="Records since the detector last restarted.")
    current_rate: float = Field(description="Weighted by sampling.")
    current_interval: list[float] = Field(description="95% Wilson interval.")
    cusum: float
    threshold: float = Field(description="Pending at half of it, firing at it.")
    expected_delay: float | None = Field(description="Records needed to catch the design shift.")
    records_per_day: float
    change_at: datetime | None
    last_at: datetime | None
    state: State
    explained_by: str | None = Field(description="The segment whose drift explains this one.")
    causes: dict[Cause, float] = Field(
        default_factory=dict,
        description="Points of `current_rate` each cause accounts for: `retrieval` (the "
        "chunks missed what the question asks) and `generation` (they held it and the "
        "answer strayed). Empty when the judge gave no cause.",
    )


class SegmentOut(BaseModel):
    segment: str = Field(description=SEGMENT_HELP)
    labels: dict[str, str]
    state: State = Field(description="The most alarming of its detectors' states.")
    detectors: list[Detector]


class Silent(BaseModel):
    segment: str
    labels: dict[str, str]
    last_at: datetime
    per_day: float


class Building(BaseModel):
    segment: str = Field(description="The overall of a partition whose baseline builds.")
    labels: dict[str, str]
    records: int = Field(description="Scored records so far.")
    records_needed: int
    days: float = Field(description="Days since its first scored record.")
    days_needed: float
    ceiling: float = Field(
        description="Until the baseline is frozen, `faithfulness_ceiling` fires above this "
        "unsupported rate over the last hour (FAITHMON_ALERT_CEILING)."
    )
    line: str = Field(description="The same, as one line.")


class Segments(BaseModel):
    judge: str | None = Field(description="The judge configuration whose scores drift watches.")
    baseline_ready: bool = Field(description="False while the baseline is still being built.")
    items: list[SegmentOut] = Field(
        description="Overall first, then each tenant's overall before its segments."
    )
    silent: list[Silent] = Field(description="Watched segments that went quiet.")
    building: list[Building] = Field(
        default_factory=list,
        description="Partitions whose drift baseline is still building: how far each has "
        "come, and the ceiling that watches them until drift starts.",
    )
    computed_at: datetime | None = Field(
        default=None,
        description="When the worker's drift run read the detectors; null before its first.",
    )
    source: Literal["worker", "none"] = Field(
        default="none",
        description="`worker`: the worker's last drift run (a read never runs the detectors); "
        "`none`: no run yet (`faithmon worker` runs drift every FAITHMON_DRIFT_INTERVAL).",
    )
    stale: bool = Field(
        default=False,
        description="The run is older than three drift intervals and records were scored "
        "since: no worker seems to keep it fresh.",
    )


class BucketOut(BaseModel):
    start: datetime
    records: int = Field(description="Scored records (counts, not weighted by sampling).")
    unsupported: int
    critical: int
    rate: float = Field(description="Share of records with an unsupported claim.")
    interval: list[float] = Field(description="95% Wilson interval of the rate.")
    critical_rate: float


class BaselineOut(BaseModel):
    source: Literal["own", "overall"]
    records: int
    rate: float
    interval: list[float]
    critical_rate: float
    window_start: datetime
    window_end: datetime


class SeriesOut(BaseModel):
    segment: str
    labels: dict[str, str]
    judge: str
    bucket: Literal["hour", "day"]
    baseline: BaselineOut | None = Field(description="Null before the baseline is frozen.")
    buckets: list[BucketOut] = Field(description="Oldest first; empty buckets left out.")


def parse_segment(text: str) -> dict[str, str] | None:
    """``overall`` → {}; ``route=billing,tenant=acme`` → its labels; None when malformed.

    Read by the one segment-key codec (:func:`~faithmon.model.segment_from_key`); a URL
    also names no segment with an empty value (no record has one) or a NUL."""
    if text == "overall":
        return {}
    labels = segment_from_key(text) if text else None
    if labels is None or any(not v or "\x00" in k + v for k, v in labels.items()):
        return None
    return labels


def name_of(segment: Mapping[str, str]) -> str:
    return segment_key(segment) or "overall"


def _visible(segment: Mapping[str, str], tenant: str | None) -> bool:
    return tenant is None or segment.get("tenant") == tenant


def _interval(bad: float, records: int) -> list[float]:
    low, high = drift.wilson_interval(bad, records)
    return [round(low, 4), round(high, 4)]


def _place(segment: Mapping[str, str]) -> tuple[str, int, str]:
    """Overall first, then each tenant's own overall before the segments within it."""
    return (segment.get("tenant", ""), len(segment), segment_key(segment))


def _segments(readings: Sequence[Mapping[str, Any]]) -> list[SegmentOut]:
    """The detectors of a drift summary (:func:`faithmon.drift.summarize`) per segment."""
    grouped: dict[str, list[Mapping[str, Any]]] = {}
    for reading in readings:
        grouped.setdefault(segment_key(reading["labels"]), []).append(reading)
    items = []
    for key in sorted(grouped, key=lambda k: _place(grouped[k][0]["labels"])):
        detectors = [Detector.model_validate(r) for r in grouped[key]]
        worst = cast(State, segment_state(d.state for d in detectors))
        segment = grouped[key][0]["labels"]
        items.append(
            SegmentOut(
                segment=name_of(segment), labels=dict(segment), state=worst, detectors=detectors
            )
        )
    return items


@dataclass(frozen=True, slots=True)
class _Watch:
    judge: str
    config: drift.DriftConfig


WIDTHS = {"hour": timedelta(hours=1), "day": timedelta(days=1)}
SERIES_WINDOW = timedelta(days=30)
"""How far back a series reaches when no ``since`` is given: a read counts a window of
records, never all of them."""
SINCE_HELP = (
    "The first trace start counted; default: 30 days before `until` (or before now). "
    "A series always counts a window, never all time."
)


def _window_start(since: datetime | None, until: datetime | None) -> datetime:
    if since is not None:
        return since
    try:
        return (until or datetime.now(UTC)) - SERIES_WINDOW
    except OverflowError:
        # An ``until`` within the window of year 1: as early as a time can be.
        return datetime.min.replace(tzinfo=UTC)


def _buckets(counted: Sequence[reads_series.SeriesBucket]) -> list[BucketOut]:
    return [
        BucketOut(
            start=b.start,
            records=b.records,
            unsupported=b.unsupported,
            critical=b.critical,
            rate=round(b.unsupported / b.records, 4),
            interval=_interval(b.unsupported, b.records),
            critical_rate=round(b.critical / b.records, 4),
        )
        for b in counted
    ]


def _watch(sessions: Sessions, options: ReadOptions, judge: str | None) -> _Watch | None:
    with sessions() as session:
        name = judge or options.judge or store_evaluations.latest_judge(session)
        if name is None:
            return None
        config = options.drift or drift.DriftConfig(
            dimensions=reads_segments.baseline_labels(session, name)
        )
    return _Watch(name, config)


def _summary(
    sessions: Sessions, options: ReadOptions, watched: _Watch
) -> tuple[datetime | None, bool, Mapping[str, Any], bool]:
    """The worker's last drift run and whether it is stale. A read never runs the
    detectors: that takes seconds over a large store, and several viewers would start
    several runs; only the worker computes (and writes) drift."""
    clock = datetime.now(UTC)
    with sessions() as session:
        run = store_drift_runs.load(session, watched.judge)
        if run is None:
            return None, False, drift.summarize((), ()), False
        stale = clock - run.computed_at > timedelta(
            seconds=options.stale_after
        ) and store_drift_runs.scored_since(session, watched.judge, run.computed_at)
    return run.computed_at, run.baseline_ready, run.summary, stale


def segments_view(
    sessions: Sessions, options: ReadOptions, judge: str | None, tenant: str | None
) -> Segments:
    """Every detector per segment the reader may see (the API's view; the dashboard's too)."""
    watched = _watch(sessions, options, judge)
    if watched is None:
        return Segments(judge=None, baseline_ready=False, items=[], silent=[])
    computed_at, ready, summary, stale = _summary(sessions, options, watched)
    return Segments(
        judge=watched.judge,
        baseline_ready=ready,
        computed_at=computed_at,
        source="worker" if computed_at is not None else "none",
        stale=stale,
        items=_segments([r for r in summary["readings"] if _visible(r["labels"], tenant)]),
        silent=[
            Silent(
                segment=name_of(s["labels"]),
                labels=s["labels"],
                last_at=s["last_at"],
                per_day=s["per_day"],
            )
            for s in summary["silent"]
            if _visible(s["labels"], tenant)
        ],
        building=[
            Building(
                segment=name_of(b["labels"]),
                line=drift.progress_line(b),
                **{k: v for k, v in b.items() if k != "line"},
            )
            for b in summary.get("building", ())
            if _visible(b["labels"], tenant)
        ],
    )


def series_view(
    sessions: Sessions,
    options: ReadOptions,
    segment: str,
    bucket: Literal["hour", "day"],
    since: datetime | None,
    until: datetime | None,
    judge: str | None,
    tenant: str | None,
) -> SeriesOut | None:
    """One segment's rate per bucket beside its baseline, over [since, until) (since: 30
    days before until or now, by default); None for a segment the reader may not see or
    that has neither records in the window nor a baseline."""
    labels = parse_segment(segment)
    if labels is None or not _visible(labels, tenant):
        return None
    watched = _watch(sessions, options, judge)
    if watched is None:
        return None
    start = _window_start(since, until)
    with sessions() as session:
        mine = reads_series.segment_series(
            session, watched.judge, labels, WIDTHS[bucket], start, until
        )
        frozen = store_baselines.load_baselines(session, watched.judge)
    key = segment_key(labels)
    own = frozen.segments.get(key) if frozen is not None else None
    if not mine and own is None:
        return None
    baseline = None
    # A segment too thin for a baseline of its own is compared with its partition's
    # overall (its tenant's, or the whole untenanted traffic's), as its detector is.
    parent = segment_key({"tenant": labels["tenant"]}) if "tenant" in labels else ""
    chosen = own or (frozen.segments.get(parent) if frozen is not None else None)
    if frozen is not None and chosen is not None:
        baseline = BaselineOut(
            source="own" if own is not None else "overall",
            records=chosen.records,
            rate=round(chosen.rate, 4),
            interval=_interval(chosen.rate * chosen.records, chosen.records),
            critical_rate=round(chosen.rate_of("critical"), 4),
            window_start=frozen.start,
            window_end=frozen.end,
        )
    return SeriesOut(
        segment=name_of(labels),
        labels=labels,
        judge=watched.judge,
        bucket=bucket,
        baseline=baseline,
        buckets=_buckets(mine),
    )


def router(sessions: Sessions, options: ReadOptions) -> APIRouter:
    api = APIRouter(tags=["segments"])

    @api.get("/segments", response_model=Segments)
    def list_segments(
        who: Annotated[Caller, Depends(caller)], judge: JudgeParam = None
    ) -> Segments:
        """Every drift detector per segment: baseline, current rate with its interval, CUSUM,
        threshold and state, as the worker's last drift run read them."""
        return segments_view(sessions, options, judge, who.tenant)

    @api.get("/segments/{segment:path}/series", response_model=SeriesOut, responses=NOT_FOUND)
    def segment_series(
        who: Annotated[Caller, Depends(caller)],
        segment: Annotated[str, Path(description=SEGMENT_HELP)],
        bucket: Literal["hour", "day"] = "hour",
        since: Annotated[UtcTime | None, Query(description=SINCE_HELP)] = None,
        until: UtcTime | None = None,
        judge: JudgeParam = None,
    ) -> SeriesOut:
        """One segment's scored records per hour or day, beside its frozen baseline."""
        found = series_view(sessions, options, segment, bucket, since, until, judge, who.tenant)
        if found is None:
            raise not_found("such segment")
        return found

    return api
