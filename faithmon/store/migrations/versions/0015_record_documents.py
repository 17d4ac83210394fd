"""Each record's document ids apart from its chunks, filled from the records stored so far.

Revision ID: 0015
Revises: 0014
Create Date: 2026-12-01
"""

import sqlalchemy as sa
from alembic import op

revision = "0015"
down_revision = "0014"
branch_labels = None
depends_on = None

# Records read per statement: the DISTINCT of one batch is sorted at a time, not the table's.
BATCH = 5000

# A row per record and distinct chunk id, as text (a number too); a chunk without an id
# names nothing. The same rows `records.save_records` writes for a new record.
_BACKFILL = {
    "postgresql": (
        "SELECT DISTINCT r.id, c.value ->> 'id' AS doc_id, r.tenant, r.started_at "
        "FROM records r CROSS JOIN LATERAL jsonb_array_elements(r.chunks) AS c(value) "
        "WHERE r.id >= :low AND r.id < :high AND c.value ->> 'id' IS NOT NULL"
    ),
    "sqlite": (
        "SELECT DISTINCT r.id, CAST(json_extract(c.value, '$.id') AS VARCHAR) AS doc_id, "
        "r.tenant, r.started_at FROM records r, json_each(r.chunks) c "
        "WHERE r.id >= :low AND r.id < :high AND json_extract(c.value, '$.id') IS NOT NULL"
    ),
}


def upgrade() -> None:
    op.create_table(
        "record_documents",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("record_id", sa.Integer(), nullable=False),
        sa.Column("doc_id", sa.Text(), nullable=False),
        sa.Column("tenant", sa.String(200), nullable=True),
        sa.Column("started_at", sa.DateTime, nullable=False),
        sa.ForeignKeyConstraint(
            ["record_id"],
            ["records.id"],
            name="fk_record_documents_record_id_records",
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name="pk_record_documents"),
    )
    _backfill()
    # Built after the backfill: one sort per index, not an update per row.
    op.create_index("ix_record_documents_record_id", "record_documents", ["record_id"])
    op.create_index("ix_record_documents_started_at", "record_documents", ["started_at"])
    op.create_index(
        "ix_record_documents_tenant_started_at", "record_documents", ["tenant", "started_at"]
    )


def _backfill() -> None:
    bind = op.get_bind()
    select = _BACKFILL[bind.dialect.name]
    insert = sa.text(
        f"INSERT INTO record_documents (record_id, doc_id, tenant, started_at) {select}"
    )
    # Batches by id: each ends before the first record of the next.
    high_of = sa.text("SELECT id FROM records WHERE id >= :low ORDER BY id LIMIT 1 OFFSET :n")
    low, top = bind.execute(sa.text("SELECT min(id), max(id) FROM records")).one()
    while low is not None:
        high = bind.execute(high_of, {"low": low, "n": BATCH}).scalar()
        bind.execute(insert, {"low": low, "high": top + 1 if high is None else high})
        low = high


def downgrade() -> None:
    op.drop_index("ix_record_documents_tenant_started_at", "record_documents")
    op.drop_index("ix_record_documents_started_at", "record_documents")
    op.drop_index("ix_record_documents_record_id", "record_documents")
    op.drop_table("record_documents")
