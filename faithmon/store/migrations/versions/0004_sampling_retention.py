"""Sampling counts and dropped traces; daily per-segment aggregates kept past retention.

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-29
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None

JSON = sa.JSON().with_variant(JSONB(), "postgresql")


def upgrade() -> None:
    op.create_table(
        "sampling_counts",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("hour", sa.DateTime(), nullable=False),
        sa.Column("segment_key", sa.String(500), nullable=False),
        sa.Column("segment", JSON, nullable=False),
        sa.Column("reason", sa.String(100), nullable=False),
        sa.Column("count", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_sampling_counts"),
        sa.UniqueConstraint("hour", "segment_key", "reason", name="uq_sampling_counts_hour"),
    )
    op.create_table(
        "dropped_traces",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("trace_id", sa.String(32), nullable=False),
        sa.Column("reason", sa.String(100), nullable=False),
        sa.Column("segment", JSON, nullable=False),
        sa.Column("at", sa.DateTime(), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_dropped_traces"),
    )
    op.create_index("ix_dropped_traces_trace_id", "dropped_traces", ["trace_id"])
    op.create_index("ix_dropped_traces_at", "dropped_traces", ["at"])
    op.create_table(
        "segment_daily",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("day", sa.DateTime(), nullable=False),
        sa.Column("segment_key", sa.String(500), nullable=False),
        sa.Column("segment", JSON, nullable=False),
        sa.Column("records", sa.Integer(), nullable=False),
        sa.Column("scored", sa.Integer(), nullable=False),
        sa.Column("unsupported", sa.Integer(), nullable=False),
        sa.Column("faithfulness_sum", sa.Float(), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_segment_daily"),
        sa.UniqueConstraint("day", "segment_key", name="uq_segment_daily_day"),
    )


def downgrade() -> None:
    op.drop_table("segment_daily")
    op.drop_index("ix_dropped_traces_at", table_name="dropped_traces")
    op.drop_index("ix_dropped_traces_trace_id", table_name="dropped_traces")
    op.drop_table("dropped_traces")
    op.drop_table("sampling_counts")
