"""What SQLite and PostgreSQL do differently, said once for every query module."""

from __future__ import annotations

from contextlib import AbstractContextManager, nullcontext
from typing import Any, TypeVarTuple

from sqlalchemy import JSON, ColumnElement, Connection, Engine, Select, func, select, type_coerce
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
