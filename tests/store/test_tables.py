"""The ORM tables against the migrations, on SQLite and PostgreSQL."""

from __future__ import annotations

from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext

from faithmon.store import engine as store_engine
from faithmon.store.tables import Base


def test_schema_matches_models(empty_database_url: str) -> None:
    """The migrations, run from zero, build exactly the schema the ORM models describe."""
    engine = store_engine.make_engine(empty_database_url)
    try:
        store_engine.upgrade(engine)
        assert store_engine.current_revision(engine) == store_engine.head_revision()
        with engine.connect() as connection:
            diff = compare_metadata(MigrationContext.configure(connection), Base.metadata)
        assert diff == []
    finally:
        engine.dispose()
