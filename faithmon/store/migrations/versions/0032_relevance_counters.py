"""The relevance histograms of /metrics as running totals beside the other counters, so a
scrape reads one row per segment instead of every stored evaluation.

Rows written before this revision have none (null): their histograms count from the
upgrade on, as a Prometheus counter does from a restart.

Revision ID: 0032
Revises: 0031
Create Date: 2026-12-03
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

JSON = sa.JSON().with_variant(JSONB(), "postgresql")

revision = "0032"
down_revision = "0031"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("segment_metrics") as batch:
        batch.add_column(sa.Column("relevance", JSON, nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("segment_metrics") as batch:
        batch.drop_column("relevance")
