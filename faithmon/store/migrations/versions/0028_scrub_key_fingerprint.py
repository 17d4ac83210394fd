"""The scrub key's fingerprint: a keyed hash the first receiver or worker records, so a
process started with another key refuses to start instead of giving stored values a
second pseudonym.

Revision ID: 0028
Revises: 0027
Create Date: 2026-12-04
"""

import sqlalchemy as sa
from alembic import op

revision = "0028"
down_revision = "0027"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "fingerprints",
        sa.Column("name", sa.String(40), nullable=False),
        sa.Column("fingerprint", sa.String(64), nullable=False),
        sa.Column("recorded_by", sa.String(500), nullable=False),
        sa.Column("recorded_at", sa.DateTime, nullable=False),
        sa.PrimaryKeyConstraint("name", name="pk_fingerprints"),
    )


def downgrade() -> None:
    op.drop_table("fingerprints")
