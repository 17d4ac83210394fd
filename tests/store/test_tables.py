"""The ORM tables against the migrations, on SQLite and PostgreSQL."""

from __future__ import annotations

from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import Engine

from faithmon.store.tables import Base


def test_schema_matches_models(engine: Engine) -> None:
    """The migrations build exactly the schema the ORM models describe."""
    with engine.connect() as connection:
        diff = compare_metadata(MigrationContext.configure(connection), Base.metadata)
    assert diff == []
