"""The contracts beside the score: citation accuracy, unresolved markers, policy findings.

Revision ID: 0024
Revises: 0023
Create Date: 2026-12-02
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision = "0024"
down_revision = "0023"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("evaluations") as batch:
        batch.add_column(sa.Column("citation_accuracy", sa.Float(), nullable=True))
        batch.add_column(
            sa.Column("unresolved_citations", sa.Integer(), nullable=False, server_default="0")
        )
        batch.add_column(
            sa.Column(
                "policy",
                sa.JSON().with_variant(JSONB(), "postgresql"),
                nullable=False,
                server_default="[]",
            )
        )


def downgrade() -> None:
    with op.batch_alter_table("evaluations") as batch:
        batch.drop_column("policy")
        batch.drop_column("unresolved_citations")
        batch.drop_column("citation_accuracy")
