"""The report's counts, summed in SQL, against the outcomes they summarise: the same
buckets as counting ``evaluations.outcomes`` in Python, on SQLite and PostgreSQL."""

from __future__ import annotations

import random
import shutil
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import ExitStack
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy.orm import Session, sessionmaker

from faithmon.model import Alert, Chunk, Claim, Judgement, Outcome, RagRecord
from faithmon.store import alerts, evaluations, records, sentinels
from faithmon.store import engine as store_engine
from faithmon.store.report import Bucket, bucket_width, floor_time, load_report
from tests.databases import scratch_postgres
from tests.timing import days_ago

JUDGE = "offline/a"
OTHER = "offline/b"
T0 = days_ago(8)
SEGMENTS: tuple[dict[str, str], ...] = (
    {"route": "billing"},
    {"route": "search", "tenant": "acme"},
    {"model": "m2"},
    {"tenant": "globex"},
    {"judge": JUDGE, "sentinel": "core"},
    {"route": "nowhere"},
)


def _started(rng: random.Random, n: int, step: timedelta) -> datetime:
    """On the edge of a step, a microsecond either side of one, or anywhere in the step."""
    edge = T0 + (n % 30) * step
    tick = timedelta(microseconds=1)
    return rng.choice((edge, edge - tick, edge + tick, edge + step * rng.random()))


def _judgement(rng: random.Random, judge: str) -> Judgement:
    kind = rng.random()
    if kind < 0.1:
        return Judgement(judge, "judge_error", error="timeout")
    if kind < 0.15:
        return Judgement(judge, "ok")  # no claims: counted, never unsupported
    claims = [Claim("fine", "supported", chunk=0, quote="x")]
    if kind < 0.45:
        claims.append(Claim("made up", rng.choice(("unsupported", "contradicted"))))
    return Judgement(judge, "ok", tuple(claims))


def _seed(sessions: sessionmaker[Session], step: timedelta, count: int = 240) -> None:
    rng = random.Random(7)
    made = []
    for n in range(count):
        labels = {"route": rng.choice(("billing", "search"))}
        if tenant := rng.choice(("acme", "globex", None)):
            labels["tenant"] = tenant
        if rng.random() < 0.7:
            labels["model"] = rng.choice(("m1", "m2"))
        made.append(
            RagRecord(
                trace_id=f"{n:032x}",
                question="q",
                answer="a",
                chunks=(Chunk(0, "text", id="doc"),),
                labels=labels,
                started_at=_started(rng, n, step),
            )
        )
    with sessions.begin() as session:
        records.save_records(session, made)
    with sessions.begin() as session:
        claimed = records.claim_pending(session, "test", count, 60)
    # Three rounds of evaluations; the middle one while sentinels distrusted the judge.
    for round_ in range(3):
        with sessions.begin() as session:
            if round_ == 1:
                sentinels.distrust(session, JUDGE, datetime.now(UTC), "drifted")
            for record_id, _ in claimed[round_::3]:
                if rng.random() < 0.1:
                    continue  # still pending
                evaluations.save_evaluation(session, record_id, _judgement(rng, JUDGE))
                if rng.random() < 0.3:
                    evaluations.save_evaluation(session, record_id, _judgement(rng, OTHER))
            if round_ == 1:
                sentinels.trust_again(session, JUDGE, datetime.now(UTC))
    with sessions.begin() as session:
        alerts.save_alerts(
            session,
            [
                Alert("faithfulness_drift", s, "firing", "critical", T0, T0)
                for s in SEGMENTS
                if "judge" not in s
            ]
            + [Alert("judge_drift", SEGMENTS[4], "firing", "critical", T0, T0)],
        )


Seeded = Callable[[timedelta], sessionmaker[Session]]


@pytest.fixture(
    scope="module", params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)]
)
def seeded(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Seeded]:
    """A store seeded for each step, made once per module and backend (the tests only
    read it)."""
    made: dict[timedelta, sessionmaker[Session]] = {}
    with ExitStack() as stack:

        def store(step: timedelta) -> sessionmaker[Session]:
            if step not in made:
                if request.param == "sqlite":
                    path = tmp_path_factory.mktemp("report-counts") / "faithmon.db"
                    shutil.copyfile(request.getfixturevalue("sqlite_template"), path)
                    url = f"sqlite:///{path}"
                else:
                    template = request.getfixturevalue("postgres_template")
                    url = stack.enter_context(scratch_postgres(template))
                engine = store_engine.make_engine(url)
                stack.callback(engine.dispose)
                made[step] = store_engine.session_factory(engine)
                _seed(made[step], step)
            return made[step]

        yield store


def _counted(
    outcomes: Sequence[Outcome], segment: Mapping[str, str], width: timedelta
) -> tuple[Bucket, ...]:
    """What load_report did before it summed in SQL: each outcome counted in Python."""
    tally: dict[datetime, list[int]] = {}
    for outcome in outcomes:
        if all(outcome.labels.get(k) == v for k, v in segment.items()):
            counts = tally.setdefault(floor_time(outcome.at, width), [0, 0])
            counts[0] += 1
            counts[1] += outcome.unsupported
    return tuple(Bucket(start, n, u) for start, (n, u) in sorted(tally.items()))


@pytest.mark.parametrize(
    ("step", "target"),
    [
        (timedelta(hours=4), 4),  # buckets of days
        (timedelta(minutes=10), 4),
        (timedelta(minutes=10), 30),
        (timedelta(minutes=10), 500),
        (timedelta(seconds=10), 30),
        # Buckets of 0.1 s: a microsecond past an edge is in the next one.
        (timedelta(milliseconds=100), 30),
    ],
)
@pytest.mark.parametrize("tenant", [None, "acme"])
def test_summed_buckets_match_the_outcomes_counted_one_by_one(
    seeded: Seeded, step: timedelta, target: int, tenant: str | None
) -> None:
    """Every charted segment has the buckets counting its outcomes gives: the same edges
    to the microsecond, distrusted and failed evaluations left out, the tenant's only."""
    sessions = seeded(step)
    with sessions() as session:
        data = load_report(session, JUDGE, target_buckets=target, tenant=tenant)
        outcomes = evaluations.outcomes(session, JUDGE, evidence=False)
    if tenant is not None:
        outcomes = [o for o in outcomes if o.labels.get("tenant") == tenant]
    width = bucket_width(outcomes[0].at, outcomes[-1].at, target)
    assert data.bucket == width
    overall = {} if tenant is None else {"tenant": tenant}
    charted = [overall, *(s for s in SEGMENTS if tenant is None or s.get("tenant") == tenant)]
    expected = [
        (dict(s), buckets)
        for s in charted
        if (buckets := _counted(outcomes, s, width)) or s == overall
    ]
    assert [(dict(s.segment), s.buckets) for s in data.series] == expected
    assert sum(b.records for b in data.series[0].buckets) == len(outcomes)
    assert 0 < data.series[0].unsupported < len(outcomes)


def test_no_outcome_gives_an_empty_overall(sessions: sessionmaker[Session]) -> None:
    """Before anything is scored the overall is there, with no bucket."""
    with sessions() as session:
        data = load_report(session, JUDGE)
    assert [(dict(s.segment), s.buckets) for s in data.series] == [({}, ())]
