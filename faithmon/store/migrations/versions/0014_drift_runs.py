"""Each judge configuration's last drift run, which the read API serves.

Revision ID: 0014
Revises: 0013
Create Date: 2026-12-01
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision = "0014"
down_revision = "0013"
branch_labels = None
depends_on = None

JSON = sa.JSON().with_variant(JSONB(), "postgresql")


def upgrade() -> None:
    op.create_table(
        "drift_runs",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("judge", sa.String(200), nullable=False),
        sa.Column("computed_at", sa.DateTime, nullable=False),
        sa.Column("baseline_ready", sa.Boolean, nullable=False),
        sa.Column("held_back", sa.Boolean, nullable=False),
        sa.Column("summary", JSON, nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_drift_runs"),
        sa.UniqueConstraint("judge", name="uq_drift_runs_judge"),
    )


def downgrade() -> None:
    op.drop_table("drift_runs")
