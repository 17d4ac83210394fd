"""API keys (hashes only), and each record's tenant as an indexed column.

Revision ID: 0012
Revises: 0011
Create Date: 2026-12-01
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None

JSON = sa.JSON().with_variant(JSONB(), "postgresql")


def upgrade() -> None:
    with op.batch_alter_table("records") as batch:
        batch.add_column(sa.Column("tenant", sa.String(200), nullable=True))
        batch.create_index("ix_records_tenant_started_at", ["tenant", "started_at"])
    if op.get_bind().dialect.name == "postgresql":
        op.execute("UPDATE records SET tenant = labels ->> 'tenant' WHERE labels ? 'tenant'")
    else:
        op.execute(
            "UPDATE records SET tenant = json_extract(labels, '$.tenant') "
            "WHERE json_extract(labels, '$.tenant') IS NOT NULL"
        )
    op.create_table(
        "api_keys",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("prefix", sa.String(16), nullable=False),
        sa.Column("key_hash", sa.String(64), nullable=False),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("scopes", JSON, nullable=False),
        sa.Column("tenant", sa.String(200), nullable=True),
        sa.Column("created_at", sa.DateTime, nullable=False),
        sa.Column("revoked_at", sa.DateTime, nullable=True),
        sa.PrimaryKeyConstraint("id", name="pk_api_keys"),
        sa.UniqueConstraint("key_hash", name="uq_api_keys_key_hash"),
    )
    op.create_index("ix_api_keys_prefix", "api_keys", ["prefix"])


def downgrade() -> None:
    op.drop_index("ix_api_keys_prefix", "api_keys")
    op.drop_table("api_keys")
    with op.batch_alter_table("records") as batch:
        batch.drop_index("ix_records_tenant_started_at")
        batch.drop_column("tenant")
