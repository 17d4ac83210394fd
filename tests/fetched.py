"""How many rows a piece of work fetched from the database: the SELECTs it sent, run
again and counted (a bound a read must keep, whatever the store holds)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from sqlalchemy import Engine, event


@contextmanager
def rows_fetched(engine: Engine, table: str | None = None) -> Iterator[list[int]]:
    """Filled on exit with the rows each SELECT sent to ``engine`` returns (of those that
    read ``table``, if given), counted by running it again in a connection of its own."""
    sent: list[tuple[str, Any]] = []

    def keep(conn: Any, cursor: Any, sql: str, params: Any, context: Any, many: bool) -> None:
        reads = table is None or f"FROM {table}" in sql
        if sql.lstrip().upper().startswith("SELECT") and not many and reads:
            sent.append((sql, params))

    counts: list[int] = []
    event.listen(engine, "before_cursor_execute", keep)
    try:
        yield counts
    finally:
        event.remove(engine, "before_cursor_execute", keep)
    with engine.connect() as connection:
        counts.extend(len(connection.exec_driver_sql(sql, params).all()) for sql, params in sent)
