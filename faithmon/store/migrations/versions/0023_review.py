"""The review loop: queue items, claim labels, calibrated thresholds, the queue's cursor.

Revision ID: 0023
Revises: 0022
Create Date: 2026-12-02
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision = "0023"
down_revision = "0022"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "review_items",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("evaluation_id", sa.Integer(), nullable=False),
        sa.Column("record_id", sa.Integer(), nullable=False),
        sa.Column("trace_id", sa.String(32), nullable=False),
        sa.Column("tenant", sa.String(200), nullable=True),
        sa.Column("judge", sa.String(200), nullable=False),
        sa.Column("reason", sa.String(40), nullable=False),
        sa.Column("priority", sa.Integer(), nullable=False),
        sa.Column("inclusion_probability", sa.Float(), nullable=False),
        sa.Column("reviews_wanted", sa.Integer(), nullable=False),
        sa.Column("reviews_done", sa.Integer(), nullable=False),
        sa.Column("status", sa.String(20), nullable=False),
        sa.Column("lease_owner", sa.String(200), nullable=True),
        sa.Column("lease_expires", sa.DateTime(), nullable=True),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["evaluation_id"],
            ["evaluations.id"],
            name="fk_review_items_evaluation_id_evaluations",
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["record_id"],
            ["records.id"],
            name="fk_review_items_record_id_records",
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name="pk_review_items"),
        sa.UniqueConstraint("evaluation_id", name="uq_review_items_evaluation_id"),
    )
    op.create_index("ix_review_items_next", "review_items", ["status", "tenant", "priority", "id"])
    op.create_index("ix_review_items_trace_id", "review_items", ["trace_id"])
    op.create_table(
        "review_labels",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("item_id", sa.Integer(), nullable=False),
        sa.Column("reviewer", sa.String(200), nullable=False),
        sa.Column("claim_index", sa.Integer(), nullable=False),
        sa.Column("part", sa.Integer(), nullable=False),
        sa.Column("merged", sa.JSON().with_variant(JSONB(), "postgresql"), nullable=False),
        sa.Column("claim_text", sa.Text(), nullable=False),
        sa.Column("verdict", sa.String(20), nullable=False),
        sa.Column("critical", sa.Boolean(), nullable=False),
        sa.Column("note", sa.Text(), nullable=False),
        sa.Column("judge", sa.String(200), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["item_id"],
            ["review_items.id"],
            name="fk_review_labels_item_id_review_items",
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name="pk_review_labels"),
    )
    op.create_index("ix_review_labels_item_id", "review_labels", ["item_id", "reviewer"])
    op.create_table(
        "review_thresholds",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("judge", sa.String(200), nullable=False),
        sa.Column("segment_key", sa.String(500), nullable=False),
        sa.Column("threshold", sa.Float(), nullable=False),
        sa.Column("guard_low", sa.Float(), nullable=False),
        sa.Column("guard_high", sa.Float(), nullable=False),
        sa.Column("figures", sa.JSON().with_variant(JSONB(), "postgresql"), nullable=False),
        sa.Column("rationale", sa.Text(), nullable=False),
        sa.Column("dataset_version", sa.String(64), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_review_thresholds"),
    )
    op.create_index(
        "ix_review_thresholds_judge", "review_thresholds", ["judge", "segment_key", "id"]
    )
    op.create_table(
        "review_cursors",
        sa.Column("judge", sa.String(200), nullable=False),
        sa.Column("last_evaluation_id", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("judge", name="pk_review_cursors"),
    )


def downgrade() -> None:
    op.drop_table("review_cursors")
    op.drop_index("ix_review_thresholds_judge", "review_thresholds")
    op.drop_table("review_thresholds")
    op.drop_index("ix_review_labels_item_id", "review_labels")
    op.drop_table("review_labels")
    op.drop_index("ix_review_items_trace_id", "review_items")
    op.drop_index("ix_review_items_next", "review_items")
    op.drop_table("review_items")
