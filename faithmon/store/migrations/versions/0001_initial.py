"""Initial schema: records, evaluations, drift baselines, alerts.

Revision ID: 0001
Revises:
Create Date: 2026-11-29
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None

JSON = sa.JSON().with_variant(JSONB(), "postgresql")


def upgrade() -> None:
    op.create_table(
        "records",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("trace_id", sa.String(32), nullable=False),
        sa.Column("started_at", sa.DateTime(), nullable=False),
        sa.Column("ingested_at", sa.DateTime(), nullable=False),
        sa.Column("question", sa.Text(), nullable=False),
        sa.Column("answer", sa.Text(), nullable=False),
        sa.Column("chunks", JSON, nullable=False),
        sa.Column("labels", JSON, nullable=False),
        sa.Column("status", sa.String(20), nullable=False),
        sa.Column("sample_reason", sa.String(100), nullable=False),
        sa.Column("lease_owner", sa.String(100), nullable=True),
        sa.Column("lease_expires", sa.DateTime(), nullable=True),
        sa.PrimaryKeyConstraint("id", name="pk_records"),
        sa.UniqueConstraint("trace_id", name="uq_records_trace_id"),
    )
    op.create_index("ix_records_started_at", "records", ["started_at"])
    op.create_index("ix_records_status_id", "records", ["status", "id"])
    op.create_table(
        "evaluations",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("record_id", sa.Integer(), nullable=False),
        sa.Column("judge", sa.String(200), nullable=False),
        sa.Column("status", sa.String(20), nullable=False),
        sa.Column("faithfulness", sa.Float(), nullable=True),
        sa.Column("lenient", sa.Float(), nullable=True),
        sa.Column("claims", JSON, nullable=False),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("usage", JSON, nullable=False),
        sa.Column("latency_ms", sa.Float(), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["record_id"],
            ["records.id"],
            name="fk_evaluations_record_id_records",
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name="pk_evaluations"),
        sa.UniqueConstraint("record_id", "judge", name="uq_evaluations_record_id"),
    )
    op.create_table(
        "drift_baselines",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("segment_key", sa.String(500), nullable=False),
        sa.Column("records", sa.Integer(), nullable=False),
        sa.Column("unsupported", sa.Integer(), nullable=False),
        sa.Column("window_start", sa.DateTime(), nullable=False),
        sa.Column("window_end", sa.DateTime(), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_drift_baselines"),
        sa.UniqueConstraint("segment_key", name="uq_drift_baselines_segment_key"),
    )
    op.create_table(
        "alerts",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("rule", sa.String(100), nullable=False),
        sa.Column("segment_key", sa.String(500), nullable=False),
        sa.Column("segment", JSON, nullable=False),
        sa.Column("state", sa.String(20), nullable=False),
        sa.Column("severity", sa.String(20), nullable=False),
        sa.Column("opened_at", sa.DateTime(), nullable=False),
        sa.Column("updated_at", sa.DateTime(), nullable=False),
        sa.Column("resolved_at", sa.DateTime(), nullable=True),
        sa.Column("details", JSON, nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_alerts"),
    )
    op.create_index("ix_alerts_rule_segment_state", "alerts", ["rule", "segment_key", "state"])


def downgrade() -> None:
    op.drop_table("alerts")
    op.drop_table("drift_baselines")
    op.drop_table("evaluations")
    op.drop_table("records")
