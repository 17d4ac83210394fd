"""Sentinel sets, their runs per judge configuration, and judge trust.

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-29
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None

JSON = sa.JSON().with_variant(JSONB(), "postgresql")


def upgrade() -> None:
    op.create_table(
        "sentinel_sets",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("version", sa.String(32), nullable=False),
        sa.Column("cases", JSON, nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_sentinel_sets"),
        sa.UniqueConstraint("name", "version", name="uq_sentinel_sets_name"),
    )
    op.create_table(
        "sentinel_runs",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("set_id", sa.Integer(), nullable=False),
        sa.Column("judge", sa.String(200), nullable=False),
        sa.Column("ran_at", sa.DateTime(), nullable=False),
        sa.Column("results", JSON, nullable=False),
        sa.Column("statistic", sa.Float(), nullable=False),
        sa.Column("state", sa.String(20), nullable=False),
        sa.ForeignKeyConstraint(
            ["set_id"],
            ["sentinel_sets.id"],
            name="fk_sentinel_runs_set_id_sentinel_sets",
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name="pk_sentinel_runs"),
    )
    op.create_index("ix_sentinel_runs_judge", "sentinel_runs", ["judge"])
    op.create_table(
        "judge_trust",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("judge", sa.String(200), nullable=False),
        sa.Column("untrusted_since", sa.DateTime(), nullable=False),
        sa.Column("untrusted_until", sa.DateTime(), nullable=True),
        sa.Column("reason", sa.Text(), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_judge_trust"),
        sa.UniqueConstraint("judge", name="uq_judge_trust_judge"),
    )


def downgrade() -> None:
    op.drop_table("judge_trust")
    op.drop_index("ix_sentinel_runs_judge", table_name="sentinel_runs")
    op.drop_table("sentinel_runs")
    op.drop_table("sentinel_sets")
