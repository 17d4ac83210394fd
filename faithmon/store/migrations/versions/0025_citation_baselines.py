"""Drift baselines of the citation stream: records whose answer cites, those with a wrong or
unresolved citation, and the in-window spread of that rate.

Baselines frozen before this revision keep 0 citing records, which is what they saw: a
judge configuration older than 0024 checked no citations. The citation stream of such a
configuration stays off; the next configuration freezes its own.

Revision ID: 0025
Revises: 0024
Create Date: 2026-12-03
"""

import sqlalchemy as sa
from alembic import op

revision = "0025"
down_revision = "0024"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("drift_baselines") as batch:
        batch.add_column(sa.Column("cited", sa.Integer(), nullable=False, server_default="0"))
        batch.add_column(sa.Column("miscited", sa.Integer(), nullable=False, server_default="0"))
        batch.add_column(
            sa.Column("citation_spread", sa.Float(), nullable=False, server_default="0")
        )


def downgrade() -> None:
    with op.batch_alter_table("drift_baselines") as batch:
        batch.drop_column("citation_spread")
        batch.drop_column("miscited")
        batch.drop_column("cited")
