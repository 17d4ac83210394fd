"""Which tracing convention each record was read from.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-29
"""

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("records") as batch:
        batch.add_column(sa.Column("convention", sa.String(100), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("records") as batch:
        batch.drop_column("convention")
