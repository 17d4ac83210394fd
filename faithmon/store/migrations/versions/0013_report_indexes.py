"""Indexes that let the report count outcomes without reading records or claims.

Revision ID: 0013
Revises: 0012
Create Date: 2026-12-01
"""

import sqlalchemy as sa
from alembic import op

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # Empty on PostgreSQL, which reads labels cheaply (large chunks are TOASTed) and whose
    # B-tree entries could not hold labels of any size.
    op.create_index(
        "ix_records_tenant_started_at_labels",
        "records",
        ["tenant", "started_at", "labels"],
        postgresql_where=sa.text("false"),
    )
    op.create_index(
        "ix_evaluations_record_id_judge_status",
        "evaluations",
        ["record_id", "judge", "status", "faithfulness", "created_at"],
    )


def downgrade() -> None:
    op.drop_index("ix_evaluations_record_id_judge_status", "evaluations")
    op.drop_index("ix_records_tenant_started_at_labels", "records")
