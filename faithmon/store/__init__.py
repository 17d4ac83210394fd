"""Store: SQLAlchemy tables, Alembic migrations and the queries other parts call."""
