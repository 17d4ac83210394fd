"""A segment's series counted in SQL (``store.reads_series``) against what ``series_view``
computed before, every outcome of the judge loaded and counted in Python: the same JSON
on the seeded store, on SQLite and PostgreSQL; and a series reads its window only."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Literal

import pytest
from sqlalchemy.orm import Session, sessionmaker

from faithmon.api.v1 import ReadOptions
from faithmon.api.v1.segments import BucketOut, parse_segment, series_view
from faithmon.drift import wilson_interval
from faithmon.model import Chunk, Claim, Judgement, Outcome, RagRecord
from faithmon.store import Sessions, evaluations, records
from faithmon.store import engine as store_engine
from tests.api.seed import CONFIG, JUDGE, T0, seed
from tests.fetched import rows_fetched
from tests.timing import days_ago

OPTIONS = ReadOptions(judge=JUDGE, drift=CONFIG)
SEGMENTS = [
    "overall",
    "route=billing",
    "tenant=acme",
    "route=search,tenant=acme",
    "route=billing,tenant=globex",
]
# (since, until) around the seed's 37 hours from T0: all of it, a middle, open ends.
WINDOWS = [
    (None, None),
    (T0 + timedelta(hours=7), T0 + timedelta(hours=29, minutes=10)),
    (None, T0 + timedelta(hours=20)),
    (T0 + timedelta(hours=30), None),
    (T0 + timedelta(days=5), None),
]


def _start(at: datetime, bucket: str) -> datetime:
    hour = at.replace(minute=0, second=0, microsecond=0)
    return hour.replace(hour=0) if bucket == "day" else hour


def _interval(bad: float, n: int) -> list[float]:
    low, high = wilson_interval(bad, n)
    return [round(low, 4), round(high, 4)]


def counted_in_python(
    outcomes: Sequence[Outcome],
    labels: Mapping[str, str],
    bucket: str,
    since: datetime | None,
    until: datetime | None,
) -> list[BucketOut]:
    """What ``series_view`` did before it counted in SQL: every outcome of the judge
    loaded, and filtered and counted here."""
    tally: dict[datetime, list[int]] = {}
    for o in outcomes:
        if not all(o.labels.get(k) == v for k, v in labels.items()):
            continue
        if (since is not None and o.at < since) or (until is not None and o.at >= until):
            continue
        counts = tally.setdefault(_start(o.at, bucket), [0, 0, 0])
        counts[0] += 1
        counts[1] += o.unsupported
        counts[2] += o.critical
    return [
        BucketOut(
            start=start,
            records=n,
            unsupported=u,
            critical=c,
            rate=round(u / n, 4),
            interval=_interval(u, n),
            critical_rate=round(c / n, 4),
        )
        for start, (n, u, c) in sorted(tally.items())
    ]


@pytest.fixture(scope="module")
def seeded(module_database_url: str) -> Iterator[sessionmaker[Session]]:
    """The read API's seed (``seed.py``), shared by the module's tests, which only read."""
    engine = store_engine.make_engine(module_database_url)
    try:
        sessions = store_engine.session_factory(engine)
        seed(sessions, drift_run=False)
        yield sessions
    finally:
        engine.dispose()


@pytest.mark.parametrize("window", WINDOWS)
@pytest.mark.parametrize("bucket", ["hour", "day"])
@pytest.mark.parametrize("segment", SEGMENTS)
def test_sql_series_is_the_python_series(
    seeded: sessionmaker[Session],
    segment: str,
    bucket: Literal["hour", "day"],
    window: tuple[datetime | None, datetime | None],
) -> None:
    """Counted in SQL, a series has the buckets counting every outcome in Python gave."""
    since, until = window
    labels = parse_segment(segment)
    assert labels is not None
    series = series_view(seeded, OPTIONS, segment, bucket, since, until, None, None)
    with seeded() as session:
        outcomes = evaluations.outcomes(session, JUDGE, evidence=False)
    expected = counted_in_python(outcomes, labels, bucket, since, until)
    # None: no record in the window and no baseline of its own, as before.
    buckets = series.buckets if series is not None else []
    assert [b.model_dump() for b in buckets] == [b.model_dump() for b in expected]
    if since is None and until is None:
        assert series is not None and sum(b.records for b in buckets) > 0
    if segment == "overall" and since is None and until is None:
        assert 0 < sum(b.critical for b in buckets) < sum(b.unsupported for b in buckets)


def _record(n: int, at: datetime) -> RagRecord:
    return RagRecord(
        trace_id=f"{n + 1:032x}",
        question="q",
        answer="a",
        chunks=(Chunk(0, "text"),),
        labels={"route": "billing", "tenant": "acme"},
        started_at=at,
    )


def test_a_series_reads_its_window_not_all_time(sessions: sessionmaker[Session]) -> None:
    """With 400 scored records before the default window and 12 in it, a series fetches a
    row per bucket: not one per evaluation since the beginning of time."""
    old = [_record(n, days_ago(60) + timedelta(minutes=n)) for n in range(400)]
    # On an hour's edge and a microsecond either side, over the last day.
    edge = days_ago(1, hour=6)
    tick = timedelta(microseconds=1)
    new = [
        _record(400 + n, edge + timedelta(hours=n // 3) + (-tick, timedelta(0), tick)[n % 3])
        for n in range(12)
    ]
    claims = (Claim("x", "supported", chunk=0), Claim("y", "unsupported", critical=True))
    with sessions.begin() as session:
        records.save_records(session, [*old, *new])
    with sessions.begin() as session:
        for record_id, record in records.claim_pending(session, "test", 500, 60):
            n = int(record.trace_id, 16)
            judgement = Judgement(JUDGE, "ok", claims[: 1 + n % 2])
            evaluations.save_evaluation(session, record_id, judgement)
    engine = sessions.kw["bind"]
    with rows_fetched(engine) as counts:
        series = series_view(sessions, OPTIONS, "tenant=acme", "hour", None, None, None, None)
    assert series is not None
    assert sum(counts) <= len(series.buckets) + 5, counts
    with sessions() as session:
        outcomes = evaluations.outcomes(session, JUDGE, evidence=False)
    start = datetime.now(UTC) - timedelta(days=30)
    expected = counted_in_python(outcomes, {"tenant": "acme"}, "hour", start, None)
    assert [b.model_dump() for b in series.buckets] == [b.model_dump() for b in expected]
    assert sum(b.records for b in series.buckets) == len(new)
    assert len(series.buckets) == 5


def test_an_explicit_since_reaches_back(sessions: Sessions) -> None:
    """``since`` before the default window counts what it names (the window is a default,
    not a cap)."""
    with sessions.begin() as session:
        records.save_records(session, [_record(0, days_ago(90))])
    with sessions.begin() as session:
        ((record_id, _),) = records.claim_pending(session, "test", 10, 60)
        judgement = Judgement(JUDGE, "ok", (Claim("y", "unsupported"),))
        evaluations.save_evaluation(session, record_id, judgement)
    found = series_view(sessions, OPTIONS, "overall", "day", None, None, None, None)
    assert found is None  # nothing in the last 30 days, no baseline
    series = series_view(sessions, OPTIONS, "overall", "day", days_ago(91), None, None, None)
    assert series is not None
    assert [(b.start, b.records, b.unsupported) for b in series.buckets] == [(days_ago(90), 1, 1)]
