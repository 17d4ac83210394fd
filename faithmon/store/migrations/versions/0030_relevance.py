"""Context and answer relevance and the cause of an unfaithful answer, beside the scores:
nullable, since older evaluations and judges that do not measure them have none.

Revision ID: 0030
Revises: 0029
Create Date: 2026-12-06
"""

import sqlalchemy as sa
from alembic import op

revision = "0030"
down_revision = "0029"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("evaluations") as batch:
        batch.add_column(sa.Column("context_relevance", sa.Float, nullable=True))
        batch.add_column(sa.Column("answer_relevance", sa.Float, nullable=True))
        batch.add_column(sa.Column("cause", sa.String(16), nullable=True))
        batch.add_column(sa.Column("abstention", sa.String(16), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("evaluations") as batch:
        batch.drop_column("abstention")
        batch.drop_column("cause")
        batch.drop_column("answer_relevance")
        batch.drop_column("context_relevance")
