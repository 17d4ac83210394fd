"""Retry state on records, judge blocks and the shared daily judge usage.

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-29
"""

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("records") as batch:
        batch.add_column(sa.Column("attempts", sa.Integer(), nullable=True))
        batch.add_column(sa.Column("next_attempt_at", sa.DateTime(), nullable=True))
        batch.add_column(sa.Column("last_error", sa.Text(), nullable=True))
    op.create_table(
        "judge_blocks",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("judge", sa.String(200), nullable=False),
        sa.Column("reason", sa.Text(), nullable=False),
        sa.Column("blocked_at", sa.DateTime(), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_judge_blocks"),
        sa.UniqueConstraint("judge", name="uq_judge_blocks_judge"),
    )
    op.create_table(
        "judge_usage",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("day", sa.DateTime(), nullable=False),
        sa.Column("judge", sa.String(200), nullable=False),
        sa.Column("calls", sa.Integer(), nullable=False),
        sa.Column("prompt_tokens", sa.Integer(), nullable=False),
        sa.Column("completion_tokens", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_judge_usage"),
        sa.UniqueConstraint("day", "judge", name="uq_judge_usage_day"),
    )


def downgrade() -> None:
    op.drop_table("judge_usage")
    op.drop_table("judge_blocks")
    with op.batch_alter_table("records") as batch:
        batch.drop_column("last_error")
        batch.drop_column("next_attempt_at")
        batch.drop_column("attempts")
