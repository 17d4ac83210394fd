"""The drift detectors' state per judge configuration, and the index its runs read by.

Revision ID: 0017
Revises: 0016
Create Date: 2026-12-01
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision = "0017"
down_revision = "0016"
branch_labels = None
depends_on = None

JSON = sa.JSON().with_variant(JSONB(), "postgresql")


def upgrade() -> None:
    op.create_table(
        "drift_state",
        sa.Column("judge", sa.String(200), nullable=False),
        sa.Column("fingerprint", sa.String(64), nullable=False),
        sa.Column("watermark", sa.Integer(), nullable=False),
        sa.Column("state", JSON, nullable=False),
        sa.Column("updated_at", sa.DateTime, nullable=False),
        sa.PrimaryKeyConstraint("judge", name="pk_drift_state"),
    )
    op.create_index("ix_evaluations_judge_id", "evaluations", ["judge", "id"])


def downgrade() -> None:
    op.drop_index("ix_evaluations_judge_id", "evaluations")
    op.drop_table("drift_state")
