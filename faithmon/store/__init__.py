"""Store: SQLAlchemy tables, Alembic migrations and the queries other parts call.

Other parts name a session factory as ``Sessions`` and never import SQLAlchemy.
"""

from sqlalchemy.orm import Session, sessionmaker

Sessions = sessionmaker[Session]
"""A factory of database sessions: ``with sessions() as session`` or ``sessions.begin()``."""

__all__ = ["Session", "Sessions"]
