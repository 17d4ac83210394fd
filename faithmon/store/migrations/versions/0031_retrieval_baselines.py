"""Drift baselines of the retrieval stream: records whose context relevance was measured,
those whose retrieval missed, and the in-window spread of that rate.

Baselines frozen before this revision keep 0 measured records: the stream stays off for
that judge configuration (no baseline is frozen twice); the next one freezes its own.

Revision ID: 0031
Revises: 0030
Create Date: 2026-12-03
"""

import sqlalchemy as sa
from alembic import op

revision = "0031"
down_revision = "0030"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("drift_baselines") as batch:
        batch.add_column(sa.Column("measured", sa.Integer(), nullable=False, server_default="0"))
        batch.add_column(sa.Column("missed", sa.Integer(), nullable=False, server_default="0"))
        batch.add_column(
            sa.Column("retrieval_spread", sa.Float(), nullable=False, server_default="0")
        )


def downgrade() -> None:
    with op.batch_alter_table("drift_baselines") as batch:
        batch.drop_column("retrieval_spread")
        batch.drop_column("missed")
        batch.drop_column("measured")
