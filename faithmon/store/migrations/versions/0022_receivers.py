"""Receivers' heartbeats, which the worker reads to raise ingest_error.

Revision ID: 0022
Revises: 0021
Create Date: 2026-12-02
"""

import sqlalchemy as sa
from alembic import op

revision = "0022"
down_revision = "0021"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "receivers",
        sa.Column("name", sa.String(300), nullable=False),
        sa.Column("started_at", sa.DateTime(), nullable=False),
        sa.Column("beat_at", sa.DateTime(), nullable=False),
        sa.Column("stopped_at", sa.DateTime(), nullable=True),
        sa.Column("spans", sa.Integer(), nullable=False),
        sa.Column("records", sa.Integer(), nullable=False),
        sa.Column("lost", sa.Integer(), nullable=False),
        sa.Column("backlog", sa.Integer(), nullable=False),
        sa.Column("failing_since", sa.DateTime(), nullable=True),
        sa.Column("last_error", sa.String(200), nullable=False),
        sa.PrimaryKeyConstraint("name", name="pk_receivers"),
    )


def downgrade() -> None:
    op.drop_table("receivers")
