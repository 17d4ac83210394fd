"""The alert outbox and the state of each notification group of a grouped route.

Revision ID: 0021
Revises: 0020
Create Date: 2026-12-02
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision = "0021"
down_revision = "0020"
branch_labels = None
depends_on = None

JSON = sa.JSON().with_variant(JSONB(), "postgresql")


def upgrade() -> None:
    op.create_table(
        "alert_outbox",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("route_key", sa.String(64), nullable=False),
        sa.Column("group_key", sa.String(64), nullable=False),
        sa.Column("labels", JSON, nullable=False),
        sa.Column("alert", JSON, nullable=False),
        sa.Column("enqueued_at", sa.DateTime(), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_alert_outbox"),
    )
    op.create_index("ix_alert_outbox_group", "alert_outbox", ["route_key", "group_key", "id"])
    op.create_table(
        "alert_groups",
        sa.Column("route_key", sa.String(64), nullable=False),
        sa.Column("group_key", sa.String(64), nullable=False),
        sa.Column("labels", JSON, nullable=False),
        sa.Column("last_sent_at", sa.DateTime(), nullable=True),
        sa.Column("told", JSON, nullable=False),
        sa.PrimaryKeyConstraint("route_key", "group_key", name="pk_alert_groups"),
    )


def downgrade() -> None:
    op.drop_table("alert_groups")
    op.drop_index("ix_alert_outbox_group", "alert_outbox")
    op.drop_table("alert_outbox")
