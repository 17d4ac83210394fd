"""No lost update: what people write on an alert (an acknowledgement, a mute) and what the
jobs write back (reconciling it, telling it after its silence) never overwrite each other,
and a dry drift run never writes its state over a newer one.

The races run on PostgreSQL with two sessions in threads, the interleaving held by events:
one reads, the other writes, then the first writes. With the rows locked, the second
waits (seen in ``pg_stat_activity``) until the first commits, then works on what it wrote.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import Engine, make_url
from sqlalchemy.orm import Session, sessionmaker

from faithmon import drift
from faithmon.alerts import Policy
from faithmon.jobs import drift_fold
from faithmon.jobs._shared import reconcile_kinds
from faithmon.jobs.silences import notify_after_silences
from faithmon.model import Alert, Signal
from faithmon.model.silences import MUTED_AT, MUTED_BY, Silence
from faithmon.store import alerts as store_alerts
from faithmon.store import drift_state as store_drift_state
from faithmon.store import reads_alerts
from faithmon.store import silences as store_silences
from tests.databases import waiting_on_a_lock
from tests.timing import wait_for

POSTGRES = pytest.mark.parametrize(
    "database_url", [pytest.param("postgresql", marks=pytest.mark.postgres)], indirect=True
)
SQLITE = pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)

RULE = "judge_error"
T0 = datetime.now(UTC).replace(microsecond=0) - timedelta(hours=3)
LATER = T0 + timedelta(minutes=10)
WAIT = 30.0


@pytest.fixture
def pool() -> Iterator[ThreadPoolExecutor]:
    with ThreadPoolExecutor(2) as threads:
        yield threads


def _seed(sessions: sessionmaker[Session], **details: Any) -> int:
    alert = Alert(
        rule=RULE,
        segment={"judge": "j"},
        state="firing",
        severity="critical",
        opened_at=T0,
        updated_at=T0,
        details={"errors": 3, **details},
        notified_at=T0,
    )
    with sessions.begin() as session:
        (saved,) = store_alerts.save_alerts(session, [alert])
    assert saved.id is not None
    return saved.id


def _stored(sessions: sessionmaker[Session], alert_id: int) -> Alert:
    with sessions() as session:
        alert = store_alerts.get_alert(session, alert_id)
    assert alert is not None
    return alert


def _ack(sessions: sessionmaker[Session], alert_id: int) -> None:
    with sessions.begin() as session:
        reads_alerts.ack_for(session, alert_id, "key fm_ab12", LATER)


def _mute(sessions: sessionmaker[Session], alert_id: int) -> None:
    with sessions.begin() as session:
        store_silences.mark_muted(session, alert_id, 7, LATER)


def _reconcile(
    sessions: sessionmaker[Session], read: threading.Event, go: threading.Event
) -> list[Alert]:
    """The health job's reconciling of ``RULE``, held between its read and its write."""

    def signals(_open: list[Alert]) -> list[Signal]:
        read.set()
        assert go.wait(WAIT)
        return [Signal(RULE, {"judge": "j"}, "firing", {"errors": 5})]

    with sessions.begin() as session:
        return reconcile_kinds(session, [RULE], lambda _: True, signals, LATER, Policy())


def _done_or_waiting(engine: Engine, future: Future[Any]) -> None:
    """Until ``future`` is done (it did not wait) or some session waits for a lock."""
    wait_for(lambda: future.done() or waiting_on_a_lock(engine), WAIT, "a write or a lock wait")


PEOPLE: dict[str, tuple[Callable[[sessionmaker[Session], int], None], dict[str, Any]]] = {
    "ack": (_ack, {"acked_by": "key fm_ab12", "acked_at": LATER.isoformat()}),
    "mute": (_mute, {MUTED_AT: LATER.isoformat(), MUTED_BY: 7}),
}


@POSTGRES
@pytest.mark.parametrize("who", sorted(PEOPLE))
def test_what_people_write_while_a_job_reconciles_the_alert_stays(
    sessions: sessionmaker[Session], engine: Engine, pool: ThreadPoolExecutor, who: str
) -> None:
    """The job reads the alert, an ack (or mute) comes, the job writes: both stay."""
    alert_id = _seed(sessions)
    write, written = PEOPLE[who]
    read, go = threading.Event(), threading.Event()
    job = pool.submit(_reconcile, sessions, read, go)
    assert read.wait(WAIT)
    person = pool.submit(write, sessions, alert_id)
    _done_or_waiting(engine, person)
    go.set()
    job.result(WAIT)
    person.result(WAIT)
    stored = _stored(sessions, alert_id)
    assert {k: stored.details.get(k) for k in written} == written
    assert stored.details["errors"] == 5 and stored.updated_at == LATER


@POSTGRES
def test_a_job_reconciling_an_alert_being_acknowledged_keeps_both(
    sessions: sessionmaker[Session], engine: Engine, pool: ThreadPoolExecutor
) -> None:
    """The ack reads the alert, the job runs whole, the ack writes: both stay."""
    alert_id = _seed(sessions)
    go = threading.Event()
    go.set()  # the job is not held: it runs while the acknowledgement is open
    with sessions.begin() as session:
        reads_alerts.ack_for(session, alert_id, "key fm_ab12", LATER)
        job = pool.submit(_reconcile, sessions, threading.Event(), go)
        _done_or_waiting(engine, job)
    job.result(WAIT)
    stored = _stored(sessions, alert_id)
    assert stored.details.get("acked_by") == "key fm_ab12"
    assert stored.details["errors"] == 5 and stored.updated_at == LATER


@POSTGRES
def test_an_alert_told_after_its_silence_keeps_an_ack_made_meanwhile(
    sessions: sessionmaker[Session], engine: Engine, pool: ThreadPoolExecutor
) -> None:
    """The ack reads, the silence job tells the alert, the ack writes: the mark is gone
    (told once) and the acknowledgement stays."""
    with sessions.begin() as session:
        silence = store_silences.add_silence(
            session,
            Silence(("judge=j",), T0 - timedelta(hours=1), T0 + timedelta(hours=1), "", "me", T0),
        )
    alert_id = _seed(sessions, **{MUTED_AT: T0.isoformat(), MUTED_BY: silence.id})
    told_at = T0 + timedelta(hours=2)
    with sessions.begin() as session:
        reads_alerts.ack_for(session, alert_id, "key fm_ab12", LATER)
        job = pool.submit(notify_after_silences, sessions, [], T0, told_at)
        _done_or_waiting(engine, job)
    assert job.result(WAIT) == 1
    stored = _stored(sessions, alert_id)
    assert stored.details.get("acked_by") == "key fm_ab12"
    assert MUTED_AT not in stored.details and stored.notified_at == told_at


@POSTGRES
def test_of_two_expiries_at_once_one_ends_the_silence(
    sessions: sessionmaker[Session], engine: Engine, pool: ThreadPoolExecutor
) -> None:
    """Two people expire one silence at once: the second finds it ended already."""
    now = datetime.now(UTC)
    with sessions.begin() as session:
        silence = store_silences.add_silence(
            session, Silence(("judge=j",), now, now + timedelta(hours=1), "", "me", now)
        )
    assert silence.id is not None
    silence_id: int = silence.id

    def expire() -> bool:
        with sessions.begin() as session:
            found = store_silences.expire_silence(session, silence_id, datetime.now(UTC))
        assert found is not None
        return found[1]

    with sessions.begin() as session:
        first = store_silences.expire_silence(session, silence_id, now)
        second = pool.submit(expire)
        _done_or_waiting(engine, second)
    assert first is not None and first[1]
    assert second.result(WAIT) is False


def _write_locked(engine: Engine) -> bool:
    """Whether another writer of this SQLite file is refused (at once) for now."""
    database = make_url(str(engine.url)).database
    assert database is not None
    other = sqlite3.connect(database, timeout=0)
    try:
        other.execute("BEGIN IMMEDIATE")
    except sqlite3.OperationalError:
        return True
    finally:
        other.close()
    return False


@SQLITE
def test_on_sqlite_an_ack_reads_inside_its_write(
    sessions: sessionmaker[Session], engine: Engine
) -> None:
    """SQLite has no row locks: from the ack's read on, no other writer commits."""
    alert_id = _seed(sessions)
    with sessions.begin() as session:
        reads_alerts.ack_for(session, alert_id, "key fm_ab12", LATER)
        assert _write_locked(engine)


@SQLITE
def test_on_sqlite_a_job_reads_its_alerts_inside_its_write(
    sessions: sessionmaker[Session], engine: Engine, pool: ThreadPoolExecutor
) -> None:
    """SQLite has no row locks: from the job's read of its alerts on, no other writer
    commits until it has written them."""
    _seed(sessions)
    read, go = threading.Event(), threading.Event()
    job = pool.submit(_reconcile, sessions, read, go)
    assert read.wait(WAIT)
    try:
        assert _write_locked(engine)
    finally:
        go.set()
    job.result(WAIT)


@pytest.mark.parametrize("rival_watermark", [2, 1], ids=["newer", "same-watermark"])
def test_a_dry_run_never_writes_over_a_state_kept_after_its_read(
    sessions: sessionmaker[Session], monkeypatch: pytest.MonkeyPatch, rival_watermark: int
) -> None:
    """`drift status` reads the state, the worker keeps a newer one (a later horizon may
    keep the same watermark), `drift status` adds its thresholds: onto the newer one."""
    with sessions.begin() as session:
        first = store_drift_state.StoredState("fp", 1, {"watermark": 1, "solved": {}})
        store_drift_state.save(session, "j", first, T0)
    newer = {"watermark": rival_watermark, "horizon": "later", "solved": {"a": 1.0}}
    read = store_drift_state.load
    rivals = [newer]

    def read_then_a_run_keeps(session: Session, judge: str) -> Any:
        seen = read(session, judge)
        if rivals:  # the worker commits between this read and the write after it
            with sessions.begin() as other:
                kept = store_drift_state.StoredState("fp", rival_watermark, rivals.pop())
                store_drift_state.save(other, judge, kept, LATER)
        return seen

    monkeypatch.setattr(store_drift_state, "load", read_then_a_run_keeps)
    monkeypatch.setattr(drift, "solved", lambda: {"b": 2.0})
    with sessions.begin() as session:
        added = drift_fold.remember_solved(session, "j")
    with sessions() as session:
        stored = read(session, "j")
    assert stored is not None
    assert (stored.watermark, stored.state.get("horizon")) == (rival_watermark, "later")
    assert stored.state["solved"] == {"a": 1.0, "b": 2.0} and added


@POSTGRES  # on SQLite its first write holds the database: no run keeps a state after it
def test_a_dry_run_racing_every_time_gives_up_and_writes_nothing(
    sessions: sessionmaker[Session], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A state kept anew before each of its writes: the dry run gives up, the last kept
    state stands."""
    with sessions.begin() as session:
        first = store_drift_state.StoredState("fp", 1, {"watermark": 1, "solved": {}})
        store_drift_state.save(session, "j", first, T0)
    read = store_drift_state.load
    runs = iter(range(2, 100))

    def read_then_a_run_keeps(session: Session, judge: str) -> Any:
        seen = read(session, judge)
        mark = next(runs)
        with sessions.begin() as other:
            kept = store_drift_state.StoredState("fp", mark, {"watermark": mark, "solved": {}})
            store_drift_state.save(other, judge, kept, T0 + timedelta(minutes=mark))
        return seen

    monkeypatch.setattr(store_drift_state, "load", read_then_a_run_keeps)
    monkeypatch.setattr(drift, "solved", lambda: {"b": 2.0})
    with sessions.begin() as session:
        assert not drift_fold.remember_solved(session, "j")
    with sessions() as session:
        stored = read(session, "j")
    assert stored is not None and stored.watermark == 4 and stored.state["solved"] == {}
