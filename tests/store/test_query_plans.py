"""The queries the worker's jobs and the trace list run read an index, not a whole table, on
SQLite and PostgreSQL: each is run for real, every statement it sends is captured and
explained (PostgreSQL with sequential scans priced out, so a plan that could use an
index does), and no big table may be read end to end.

The table of what each reads, so a change that loses an index is caught here:

| job or page | query | index |
| --- | --- | --- |
| worker: claim a batch | pending records, oldest id first | ``ix_records_status_id`` |
| worker: retention pass | the oldest received, before the cutoff | ``ix_records_ingested_at_id`` |
| worker: drift run | outcomes after the horizon, in trace order | ``ix_records_started_at`` |
| worker: drift run | a score behind the horizon (late) | ``ix_evaluations_judge_id`` |
| worker: drift run | the oldest record waiting for the judge | ``ix_records_status_id`` |
| worker: drift run | the examples' outcomes by evaluation id | primary key |
| worker: policy check | the window's evaluations, newest first | ``ix_evaluations_judge_id`` |
| API: trace list, label filter | newest first, labels filtered | ``ix_records_started_at`` |
| API: trace list, rare labels | PostgreSQL: ``labels @> ...`` | ``ix_records_labels`` |
| API: trace list, tenant key | a tenant's newest first | ``ix_records_tenant_started_at`` |
| API: trace list, critical filter | claims of the shown evaluation | ``pk_claims`` |
| worker: delivery | the silences that run now | ``ix_silences_ends_at`` |
| worker: drift run | the silences ended since the last run | ``ix_silences_ends_at`` |
| API, CLI, page: silence list | not yet ended, newest first | ``ix_silences_ends_at`` |
| API, page: series | a segment's records in its window | ``ix_records_started_at`` |
| API, page: series, tenant | the same, within a tenant | ``ix_records_tenant_started_at*`` |
| API, page: series, critical | claims of each evaluation | ``pk_claims`` |
| page, report: alert list | the open alerts, the newest resolved | ``ix_alerts_state_id`` |
| page: a segment's alerts | the segment's, newest first | ``ix_alerts_segment_key_id`` |
| API: alert list by state | newest first | ``ix_alerts_state_id`` |

The API's alert list without a state walks the primary key newest first and stops at
its page's end (SQLite calls that a scan, so it is not listed here).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import timedelta
from typing import Any

import pytest
from sqlalchemy import Connection, Engine, event, select
from sqlalchemy.orm import Session, sessionmaker

from faithmon.jobs import apply_retention
from faithmon.model import Alert, Chunk, Claim, Judgement, RagRecord
from faithmon.store import alerts as store_alerts
from faithmon.store import engine as store_engine
from faithmon.store import evaluations as store_evaluations
from faithmon.store import outcome_stream, reads_alerts
from faithmon.store import policy as store_policy
from faithmon.store import records as store_records
from faithmon.store import silences as store_silences
from faithmon.store.reads_series import segment_series
from faithmon.store.reads_traces import TraceFilter, list_traces
from faithmon.store.tables import RecordRow, SilenceRow
from tests.timing import days_ago

BIG = ("records", "evaluations", "claims", "chunks", "record_documents", "silences", "alerts")
JUDGE = "judge/plans"
WINDOW = (days_ago(10) + timedelta(minutes=100), days_ago(10) + timedelta(minutes=160))
"""A series' window: 60 of the 300 records' starts."""


@contextmanager
def captured(engine: Engine) -> Iterator[list[tuple[str, Any]]]:
    statements: list[tuple[str, Any]] = []

    def keep(conn: Any, cursor: Any, sql: str, params: Any, context: Any, many: bool) -> None:
        if sql.lstrip().upper().startswith("SELECT") and not many:
            statements.append((sql, params))

    event.listen(engine, "before_cursor_execute", keep)
    try:
        yield statements
    finally:
        event.remove(engine, "before_cursor_execute", keep)


def _plan(connection: Connection, sql: str, params: Any) -> dict[str, Any]:
    """PostgreSQL's plan of a statement, its top node."""
    plan = connection.exec_driver_sql("EXPLAIN (FORMAT JSON) " + sql, params).scalar()
    top: dict[str, Any] = (plan if isinstance(plan, list) else json.loads(str(plan)))[0]["Plan"]
    return top


def _scans_postgres(engine: Engine, sql: str, params: Any) -> list[str]:
    with engine.connect() as connection:
        connection.exec_driver_sql("SET enable_seqscan = off")
        plan = _plan(connection, sql, params)
    found: list[str] = []

    def walk(node: dict[str, Any]) -> None:
        if node.get("Node Type") == "Seq Scan" and node.get("Relation Name") in BIG:
            found.append(node["Relation Name"])
        for child in node.get("Plans", ()):
            walk(child)

    walk(plan)
    return found


def _scans_sqlite(engine: Engine, sql: str, params: Any) -> list[str]:
    with engine.connect() as connection:
        rows = connection.exec_driver_sql("EXPLAIN QUERY PLAN " + sql, params).all()
    found = []
    for row in rows:
        detail = str(row[-1])
        words = detail.split()
        # "SCAN records" reads the table; "SCAN records USING INDEX ..." walks an index.
        if words[:1] == ["SCAN"] and len(words) > 1 and words[1] in BIG and "INDEX" not in detail:
            found.append(words[1])
    return found


def full_scans(engine: Engine, statements: list[tuple[str, Any]]) -> list[tuple[str, str]]:
    explain = _scans_postgres if engine.dialect.name == "postgresql" else _scans_sqlite
    return [(table, sql) for sql, params in statements for table in explain(engine, sql, params)]


def _seed(sessions: sessionmaker[Session]) -> sessionmaker[Session]:
    """Enough records, evaluations and claims that a plan is a plan."""
    start = days_ago(10)
    records = [
        RagRecord(
            trace_id=f"{n:032x}",
            question="q",
            answer="a",
            chunks=(Chunk(0, "text", id=f"doc-{n % 7}"),),
            labels={"route": ("billing", "search")[n % 2], "tenant": ("acme", "globex")[n % 3 % 2]},
            started_at=start + timedelta(minutes=n),
        )
        for n in range(300)
    ]
    claims = (Claim("x", "supported", chunk=0), Claim("y", "unsupported", critical=True))
    with sessions.begin() as session:
        store_records.save_records(session, records, start + timedelta(minutes=300))
        ids = list(session.scalars(RecordRow.__table__.select().with_only_columns(RecordRow.id)))
        for record_id in ids[:200]:
            judgement = Judgement(JUDGE, "ok", claims[: 1 + record_id % 2])
            store_evaluations.save_evaluation(session, record_id, judgement)
        store_alerts.save_alerts(session, [_alert(n) for n in range(300)])
    return sessions


def _alert(n: int) -> Alert:
    """Alerts over 300 days, of three tenants' segments and the judge; most resolved (the
    table only grows), the last few open."""
    at = days_ago(300 - n)
    tenant = ("acme", "globex", "initech")[n % 3]
    segment = {"route": f"r{n % 5}", "tenant": tenant} if n % 10 else {"judge": JUDGE}
    state = "resolved" if n < 290 else ("pending", "firing")[n % 2]
    return Alert(
        rule="faithfulness_drift" if n % 10 else "judge_drift",
        segment=segment,
        state=state,  # type: ignore[arg-type]
        severity="warning",
        opened_at=at,
        updated_at=at,
        resolved_at=at if state == "resolved" else None,
    )


@pytest.fixture
def stored(sessions: sessionmaker[Session]) -> sessionmaker[Session]:
    """A seeded store of the test's own, for a test that changes it or its statistics."""
    return _seed(sessions)


@pytest.fixture(scope="module")
def shared(module_database_url: str) -> Iterator[sessionmaker[Session]]:
    """A seeded store the module's read-only tests share (their work is rolled back)."""
    engine = store_engine.make_engine(module_database_url)
    try:
        yield _seed(store_engine.session_factory(engine))
    finally:
        engine.dispose()


def _run(sessions: sessionmaker[Session], work: Callable[[Session], object]) -> list[Any]:
    engine = sessions.kw["bind"]
    with captured(engine) as statements, sessions() as session:
        work(session)
        session.rollback()
    assert statements, "the work ran no query"
    return full_scans(engine, statements)


def _silenced(session: Session) -> bool:
    """Silences over 300 days, most of them long over (the table only grows)."""
    for n in range(300):
        start = days_ago(300 - n)
        session.add(
            SilenceRow(
                matchers=[f"model=m{n}"],
                starts_at=start,
                ends_at=start + timedelta(hours=2 + n % 48),
                comment="c",
                created_by="me",
                created_at=start,
            )
        )
    session.flush()
    return True


QUERIES: dict[str, Callable[[Session], object]] = {
    "claim a batch": lambda s: store_records.claim_pending(s, "me", 100, 60),
    "drift: after the horizon": lambda s: list(
        outcome_stream.stream(s, JUDGE, since=days_ago(10) + timedelta(minutes=250))
    ),
    "drift: late scores": lambda s: outcome_stream.late(s, JUDGE, 150, days_ago(9)),
    "drift: horizon": lambda s: outcome_stream.horizon(s, days_ago(9)),
    "drift: examples": lambda s: outcome_stream.by_seq(s, [3, 5, 8]),
    "policy: findings": lambda s: store_policy.policy_findings(
        s, JUDGE, days_ago(1), ("route",), "tenant"
    ),
    "list: label filter": lambda s: list_traces(s, TraceFilter(labels={"route": "billing"}), 50),
    "list: rare labels": lambda s: list_traces(
        s, TraceFilter(labels={"route": "billing", "model": "none-has-it"}), 50
    ),
    "list: tenant key": lambda s: list_traces(s, TraceFilter(tenant="acme"), 50),
    "list: critical": lambda s: list_traces(s, TraceFilter(critical=True, judge=JUDGE), 50),
    "silences: active": lambda s: _silenced(s) and store_silences.active_silences(s, days_ago(0)),
    "silences: ended": lambda s: (
        _silenced(s) and store_silences.ended_silences(s, days_ago(1), days_ago(0))
    ),
    "silences: list": lambda s: _silenced(s) and store_silences.list_silences(s, days_ago(0)),
    "series: a segment's window": lambda s: segment_series(
        s, JUDGE, {"route": "billing"}, timedelta(hours=1), *WINDOW
    ),
    "series: a tenant's window": lambda s: segment_series(
        s, JUDGE, {"route": "billing", "tenant": "acme"}, timedelta(days=1), *WINDOW
    ),
    "alerts: shown": lambda s: reads_alerts.shown_alerts(s, "acme", limit=20),
    "alerts: a segment's": lambda s: reads_alerts.shown_alerts(
        s, None, {"route": "r1", "tenant": "globex"}
    ),
    "alerts: by state": lambda s: reads_alerts.alert_page(s, 50, tenant="acme", state="resolved"),
}


@pytest.mark.parametrize("name", list(QUERIES))
def test_query_reads_an_index(shared: sessionmaker[Session], name: str) -> None:
    """The job's or page's statements read no big table end to end."""
    assert _run(shared, QUERIES[name]) == []


def _nodes(node: dict[str, Any]) -> Iterator[dict[str, Any]]:
    yield node
    for child in node.get("Plans", ()):
        yield from _nodes(child)


@pytest.mark.parametrize("name", ["series: a segment's window", "series: a tenant's window"])
def test_a_series_reads_only_its_window(shared: sessionmaker[Session], name: str) -> None:
    """A series looks its records up by start between the window's two ends: it reads the
    window, not every record the judge scored (an index walked end to end is no scan)."""
    engine = shared.kw["bind"]
    with captured(engine) as statements, shared() as session:
        QUERIES[name](session)
    ((sql, params),) = [(sql, params) for sql, params in statements if "GROUP BY" in sql]
    with engine.connect() as connection:
        if engine.dialect.name == "postgresql":
            connection.exec_driver_sql("SET enable_seqscan = off")
            plan = _plan(connection, sql, params)
            found = [
                str(node.get("Index Cond", ""))
                for node in _nodes(plan)
                if node.get("Relation Name") == "records"
            ]
            bounded = [c for c in found if "started_at >=" in c and "started_at <" in c]
        else:
            rows = connection.exec_driver_sql("EXPLAIN QUERY PLAN " + sql, params).all()
            found = [str(row[-1]) for row in rows if " records " in str(row[-1])]
            bounded = [c for c in found if "started_at>? AND started_at<?" in c]
    assert bounded, found


def test_retention_reads_an_index(stored: sessionmaker[Session]) -> None:
    """A retention pass selects its batch by the received index (and deletes by id)."""
    engine = stored.kw["bind"]
    with captured(engine) as statements:
        deleted = apply_retention(stored, 5, ("route",), JUDGE)
    assert deleted > 0
    assert full_scans(engine, statements) == []


def test_a_whole_table_read_is_caught(shared: sessionmaker[Session]) -> None:
    """The check itself: a filter on a column no index holds reads the whole table."""
    found = _run(shared, lambda s: s.execute(select(RecordRow.id).where(RecordRow.answer == "b")))
    assert [table for table, _ in found] == ["records"]


def _estimated_records(node: dict[str, Any]) -> float | None:
    """The planner's row estimate of the node that reads the records table."""
    if node.get("Relation Name") == "records":
        return float(node["Plan Rows"])
    for child in node.get("Plans", ()):
        found = _estimated_records(child)
        if found is not None:
            return found
    return None


@pytest.mark.parametrize(
    "database_url", [pytest.param("postgresql", marks=pytest.mark.postgres)], indirect=True
)
def test_the_label_filter_is_estimated_from_statistics(stored: sessionmaker[Session]) -> None:
    """PostgreSQL knows how many records a label filter matches (half, here), so at scale
    it walks the start index for a common label set instead of reading the whole table: a
    guess (0.5% per label) made a two-label filter look like 25 records in 1,000,000."""
    engine = stored.kw["bind"]
    with engine.connect() as connection:
        connection.exec_driver_sql("ANALYZE records")
        connection.commit()
    where = TraceFilter(labels={"route": "billing"})
    with captured(engine) as statements, stored() as session:
        list_traces(session, where, 50)
    sql, params = statements[0]
    with engine.connect() as connection:
        estimate = _estimated_records(_plan(connection, sql, params))
    assert estimate is not None
    assert 75 <= estimate <= 300, estimate


def _indexes(node: dict[str, Any]) -> set[str]:
    found = {node["Index Name"]} if "Index Name" in node else set()
    for child in node.get("Plans", ()):
        found |= _indexes(child)
    return found


@pytest.mark.parametrize(
    "database_url", [pytest.param("postgresql", marks=pytest.mark.postgres)], indirect=True
)
def test_a_rare_label_set_is_looked_up_in_the_label_index(
    stored: sessionmaker[Session],
) -> None:
    """PostgreSQL finds the records of a label set no record has through the GIN index,
    not by walking every record by start."""
    engine = stored.kw["bind"]
    where = TraceFilter(labels={"route": "billing", "model": "none-has-it"})
    with captured(engine) as statements, stored() as session:
        list_traces(session, where, 50)
    sql, params = statements[0]
    with engine.connect() as connection:
        connection.exec_driver_sql("SET enable_seqscan = off")
        used = _indexes(_plan(connection, sql, params))
    assert "ix_records_labels" in used, used
