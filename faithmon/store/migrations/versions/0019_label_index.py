"""A GIN index over records' labels, for the trace list's label filter on PostgreSQL.

Revision ID: 0019
Revises: 0018
Create Date: 2026-12-01
"""

import sqlalchemy as sa
from alembic import op

revision = "0019"
down_revision = "0018"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # Finds the records of a rare label set (``labels @> ...``) without walking every
    # record by start. Empty on SQLite, which has no GIN index and walks the start index.
    op.create_index(
        "ix_records_labels",
        "records",
        ["labels"],
        postgresql_using="gin",
        postgresql_ops={"labels": "jsonb_path_ops"},
        sqlite_where=sa.text("false"),
    )


def downgrade() -> None:
    op.drop_index("ix_records_labels", "records")
