"""Evidence checks, reranking, generation settings, keep requests and user feedback.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-29
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None

JSON = sa.JSON().with_variant(JSONB(), "postgresql")


def upgrade() -> None:
    with op.batch_alter_table("records") as batch:
        batch.add_column(sa.Column("retrieved", JSON, nullable=True))
        batch.add_column(sa.Column("generation", JSON, nullable=True))
        batch.add_column(sa.Column("keep_reason", sa.String(200), nullable=True))
        batch.add_column(sa.Column("incomplete_reason", sa.Text(), nullable=True))
    op.create_table(
        "feedback",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("trace_id", sa.String(32), nullable=False),
        sa.Column("value", JSON, nullable=False),
        sa.Column("given_at", sa.DateTime(), nullable=False),
        sa.Column("received_at", sa.DateTime(), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_feedback"),
    )
    op.create_index("ix_feedback_trace_id", "feedback", ["trace_id"])


def downgrade() -> None:
    op.drop_index("ix_feedback_trace_id", table_name="feedback")
    op.drop_table("feedback")
    with op.batch_alter_table("records") as batch:
        batch.drop_column("incomplete_reason")
        batch.drop_column("keep_reason")
        batch.drop_column("generation")
        batch.drop_column("retrieved")
