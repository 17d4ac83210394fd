"""What SQLite and PostgreSQL do differently, said once for every query module."""

from __future__ import annotations

from contextlib import AbstractContextManager, nullcontext
from datetime import timedelta
from typing import Any, TypeVarTuple

from sqlalchemy import (
    JSON,
    BigInteger,
    ColumnElement,
    Connection,
    Engine,
    FromClause,
    Integer,
    Select,
    String,
    and_,
    case,
    cast,
    extract,
    func,
    literal,
    select,
    type_coerce,
)
from sqlalchemy.dialects.postgresql import JSONB, aggregate_order_by
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.orm import Session

Ts = TypeVarTuple("Ts")


def is_postgresql(bind: Session | Engine | Connection) -> bool:
    dialect = bind.get_bind().dialect if isinstance(bind, Session) else bind.dialect
    return dialect.name == "postgresql"


def insert_for(session: Session, table: Any) -> Any:
    """An INSERT that knows ``on_conflict_do_*`` on this session's backend."""
    name = session.get_bind().dialect.name
    if name == "postgresql":
        return pg_insert(table)
    if name == "sqlite":
        return sqlite_insert(table)
    raise NotImplementedError(f"faithmon does not support the {name} dialect")


def skip_locked(session: Session, query: Select[*Ts]) -> Select[*Ts]:
    """Rows another transaction holds are passed over (PostgreSQL), so concurrent workers
    take disjoint rows. SQLite has one writer at a time and needs no row locks."""
    return query.with_for_update(skip_locked=True) if is_postgresql(session) else query


def for_update(session: Session, query: Select[*Ts]) -> Select[*Ts]:
    """``query`` for rows this transaction reads in order to write them back: no other
    writer commits a change to them between the read and the write, so none is lost.

    PostgreSQL locks the rows (FOR UPDATE; another writer of them waits, within the
    statement timeout). SQLite locks the whole database for writing before the read
    (``BEGIN IMMEDIATE``, within the busy timeout): pysqlite starts a transaction only at
    the first INSERT or UPDATE, so a plain read would run outside the write it feeds.
    Rows already in the session are read again, not served as an earlier read left them.
    """
    if is_postgresql(session):
        query = query.with_for_update()
    else:
        connection = session.connection()
        raw = connection.connection.driver_connection
        # Already in a transaction: pysqlite opened it for a write, so it holds the lock.
        if raw is None or not raw.in_transaction:
            connection.exec_driver_sql("BEGIN IMMEDIATE")
    return query.execution_options(populate_existing=True)


def savepoint(session: Session) -> AbstractContextManager[object]:
    # PostgreSQL aborts the whole transaction on a failed statement, so the statement
    # runs in a savepoint. SQLite undoes only the failed statement, and pysqlite
    # would commit the outer transaction when an outermost savepoint is released.
    if is_postgresql(session):
        return session.begin_nested()
    return nullcontext()


def json_values(session: Session, column: Any, key: str) -> ColumnElement[Any]:
    """The ``key`` of each object in a JSON array column, in order, as a JSON array (null
    where an object has no ``key``; SQL NULL or ``[]`` for an empty array).

    Computed in the database, so only the values travel, not the whole array (chunk
    texts are large, their ids are not).
    """
    if is_postgresql(session):
        elements = func.jsonb_array_elements(column)
        items = elements.table_valued("value", with_ordinality="at").render_derived()
        value = type_coerce(items.c.value, JSONB).op("->")(key)
        return (
            select(func.jsonb_agg(aggregate_order_by(value, items.c.at), type_=JSON))
            .select_from(items)
            .scalar_subquery()
        )
    # json_each walks the array in order.
    item = func.json_each(column).table_valued("value")
    return (
        select(func.json_group_array(func.json_extract(item.c.value, f"$.{key}"), type_=JSON))
        .select_from(item)
        .scalar_subquery()
    )


# Units a time can be cut to, coarsest first: where SQLite's text of a time
# ('YYYY-MM-DD HH:MM:SS.ffffff') ends for each, and date_trunc's name for it (None: none).
_UNITS = (
    (timedelta(days=1), 10, "day"),
    (timedelta(hours=1), 13, "hour"),
    (timedelta(minutes=10), 15, None),
    (timedelta(minutes=1), 16, "minute"),
    (timedelta(seconds=10), 18, None),
    (timedelta(seconds=1), 19, "second"),
    (timedelta(milliseconds=100), 21, None),
    (timedelta(milliseconds=1), 23, "milliseconds"),
    (timedelta(microseconds=1), 26, "microseconds"),
)
_MIDNIGHT = "0000-01-01 00:00:00.000000"


def time_floor(session: Session, column: Any, width: timedelta) -> ColumnElement[Any]:
    """A stored time cut to the coarsest unit that divides ``width``, still a time: the
    same bucket of ``width`` as the time itself, and cheap to group on (on SQLite a prefix
    of the text), so :func:`time_bucket` can run once per group instead of once per row."""
    postgresql = is_postgresql(session)
    length, name = next(
        (length, name)
        for unit, length, name in _UNITS
        if not width % unit and (name is not None or not postgresql)
    )
    if postgresql:
        return func.date_trunc(name, column)
    return func.substr(column, 1, length, type_=String) + literal(_MIDNIGHT[length:])


def scanned(session: Session, column: Any) -> ColumnElement[Any]:
    """``column`` as SQLite cannot look rows up by (``+ 0``), for a join that should read
    this side in index order and look the other side up, not the reverse. SQLite plans
    without statistics and would otherwise fetch each record row by its id; PostgreSQL
    has them and hashes a join of every row."""
    shifted: ColumnElement[Any] = column if is_postgresql(session) else column + 0
    return shifted


def time_bucket(session: Session, column: Any, width: timedelta) -> ColumnElement[int]:
    """The bucket of ``width`` since the epoch that a stored time falls in, as
    ``(t - epoch) // width`` does it in Python: counted in whole microseconds, so no
    rounding moves a time across a bucket's edge."""
    micros = width // timedelta(microseconds=1)
    since: ColumnElement[int]
    if is_postgresql(session):
        # epoch x 10^6 is a whole number (numeric since PostgreSQL 14; before, a double
        # within a fraction of a microsecond of it, which the cast rounds away).
        since = cast(extract("epoch", column) * 1_000_000, BigInteger)
    else:
        # SQLite keeps the time as text, 'YYYY-MM-DD HH:MM:SS.ffffff': the whole seconds
        # through strftime, the microseconds from the text (julianday would round them).
        seconds = cast(func.strftime("%s", func.substr(column, 1, 19)), Integer)
        since = seconds * 1_000_000 + cast(func.substr(column, 21, 6), Integer)
    # Integer division truncates: the floor for every time after the epoch, and OTLP
    # counts trace times from it.
    return since // micros


def json_items(session: Session, column: Any) -> tuple[FromClause, ColumnElement[Any], Any]:
    """The items of a JSON array column as rows to join (a function of the row, as SQLite's
    table functions and PostgreSQL's set-returning ones in FROM are): the FROM item, each
    item's JSON value, and its position, in the array's order."""
    if is_postgresql(session):
        items = (
            func.jsonb_array_elements(column)
            .table_valued("value", with_ordinality="at")
            .render_derived()
        )
        return items, type_coerce(items.c.value, JSONB), items.c.at
    item = func.json_each(column).table_valued("value", "key")
    return item, type_coerce(item.c.value, JSON), item.c.key


def json_text(session: Session, value: Any, key: str) -> ColumnElement[str]:
    """The ``key`` member of a JSON object as text (a number too); NULL when absent or null."""
    if is_postgresql(session):
        member: ColumnElement[str] = type_coerce(value, JSONB)[key].astext
        return member
    return cast(func.json_extract(value, f"$.{key}"), String)


def json_cited(session: Session, array: Any, item: Any, index: str, key: str) -> Any:
    """The ``key`` (as text) of the object at the position ``item[index]`` names in a JSON
    array column; NULL unless that is a whole number within the array."""
    if is_postgresql(session):
        at = type_coerce(item, JSONB)[index]
        # Nine digits at most: a whole number an integer holds, past any chunk list's end.
        whole = and_(func.jsonb_typeof(at) == "number", at.astext.regexp_match("^[0-9]{1,9}$"))
        found = type_coerce(array, JSONB)[cast(at.astext, Integer)][key].astext
        return case((whole, found), else_=None)
    at = func.json_extract(item, f"$.{index}")
    path = literal("$[") + cast(at, String) + literal(f"].{key}")
    # CASE, not AND: a path built from anything but a whole number is an error in SQLite.
    whole = and_(func.json_type(item, f"$.{index}") == "integer", at >= 0)
    return case((whole, cast(func.json_extract(array, path), String)), else_=None)
