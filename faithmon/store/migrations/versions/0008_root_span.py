"""Keep each record's root span id, to parent evaluation events and link to trace UIs.

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-29
"""

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("records") as batch:
        batch.add_column(sa.Column("root_span_id", sa.String(16), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("records") as batch:
        batch.drop_column("root_span_id")
