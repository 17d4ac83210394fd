"""Sessions ended per key: logging out ends the dashboard sessions a key opened before
that moment, on every receiver, not only the cookie of the browser that logged out.

Revision ID: 0026
Revises: 0025
Create Date: 2026-12-03
"""

import sqlalchemy as sa
from alembic import op

revision = "0026"
down_revision = "0025"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("api_keys") as batch:
        batch.add_column(sa.Column("sessions_ended_at", sa.DateTime, nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("api_keys") as batch:
        batch.drop_column("sessions_ended_at")
