"""Cumulative per-segment counters behind the Prometheus /metrics endpoint.

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-29
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None

JSON = sa.JSON().with_variant(JSONB(), "postgresql")


def upgrade() -> None:
    op.create_table(
        "segment_metrics",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("segment_key", sa.String(500), nullable=False),
        sa.Column("segment", JSON, nullable=False),
        sa.Column("judge", sa.String(200), nullable=False),
        sa.Column("evaluations", sa.Integer(), nullable=False),
        sa.Column("scored", sa.Integer(), nullable=False),
        sa.Column("unsupported", sa.Integer(), nullable=False),
        sa.Column("critical_unsupported", sa.Integer(), nullable=False),
        sa.Column("judge_errors", sa.Integer(), nullable=False),
        sa.Column("faithfulness_sum", sa.Float(), nullable=False),
        sa.Column("buckets", JSON, nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_segment_metrics"),
        sa.UniqueConstraint("segment_key", "judge", name="uq_segment_metrics_segment_key"),
    )


def downgrade() -> None:
    op.drop_table("segment_metrics")
