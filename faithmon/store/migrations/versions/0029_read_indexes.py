"""Indexes for the alert lists that pages and reports read: the open alerts, the newest
resolved, and one segment's, each looked up instead of loading every alert.

Revision ID: 0029
Revises: 0028
Create Date: 2026-12-05
"""

from alembic import op

revision = "0029"
down_revision = "0028"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index("ix_alerts_state_id", "alerts", ["state", "id"])
    op.create_index("ix_alerts_segment_key_id", "alerts", ["segment_key", "id"])


def downgrade() -> None:
    op.drop_index("ix_alerts_segment_key_id", "alerts")
    op.drop_index("ix_alerts_state_id", "alerts")
