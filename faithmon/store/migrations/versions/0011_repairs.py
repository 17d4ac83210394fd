"""Records list what was repaired to make them storable (NUL removed, NaN nulled, cuts).

Revision ID: 0011
Revises: 0010
Create Date: 2026-12-01
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None

JSON = sa.JSON().with_variant(JSONB(), "postgresql")


def upgrade() -> None:
    with op.batch_alter_table("records") as batch:
        batch.add_column(sa.Column("repairs", JSON, nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("records") as batch:
        batch.drop_column("repairs")
