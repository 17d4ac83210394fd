"""Baselines per judge configuration with critical claims and in-window spread, alert
notification times, calibrated drift thresholds.

Baselines frozen before this revision belong to no judge and lack critical counts:
they are dropped, and the next drift run freezes them again from stored history.

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-29
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None

JSON = sa.JSON().with_variant(JSONB(), "postgresql")


def upgrade() -> None:
    op.execute("DELETE FROM drift_baselines")
    with op.batch_alter_table("drift_baselines") as batch:
        batch.add_column(sa.Column("judge", sa.String(200), nullable=False))
        batch.add_column(sa.Column("critical", sa.Integer(), nullable=False))
        batch.add_column(sa.Column("spread", sa.Float(), nullable=False))
        batch.add_column(sa.Column("critical_spread", sa.Float(), nullable=False))
        batch.drop_constraint("uq_drift_baselines_segment_key", type_="unique")
        batch.create_unique_constraint("uq_drift_baselines_judge", ["judge", "segment_key"])
    with op.batch_alter_table("alerts") as batch:
        batch.add_column(sa.Column("notified_at", sa.DateTime(), nullable=True))
    op.create_table(
        "drift_thresholds",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("detector", sa.String(600), nullable=False),
        sa.Column("threshold", sa.Float(), nullable=False),
        sa.Column("facts", JSON, nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_drift_thresholds"),
        sa.UniqueConstraint("detector", name="uq_drift_thresholds_detector"),
    )


def downgrade() -> None:
    op.drop_table("drift_thresholds")
    with op.batch_alter_table("alerts") as batch:
        batch.drop_column("notified_at")
    op.execute("DELETE FROM drift_baselines")
    with op.batch_alter_table("drift_baselines") as batch:
        batch.drop_constraint("uq_drift_baselines_judge", type_="unique")
        batch.create_unique_constraint("uq_drift_baselines_segment_key", ["segment_key"])
        batch.drop_column("critical_spread")
        batch.drop_column("spread")
        batch.drop_column("critical")
        batch.drop_column("judge")
