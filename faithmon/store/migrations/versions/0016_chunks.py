"""A row per record and chunk position, filled from the records stored so far.

Revision ID: 0016
Revises: 0015
Create Date: 2026-12-01
"""

import sqlalchemy as sa
from alembic import op

revision = "0016"
down_revision = "0015"
branch_labels = None
depends_on = None

# Records read per statement: one batch's chunk arrays are expanded at a time.
BATCH = 5000

# The rows `records.save_records` writes for a new record: position from 0, the id as
# text (a number too), the score only when it is a number.
_BACKFILL = {
    "postgresql": (
        "SELECT r.id, c.at - 1, c.value ->> 'id', "
        "CASE WHEN jsonb_typeof(c.value -> 'score') = 'number' "
        "THEN CAST(c.value ->> 'score' AS FLOAT) END, r.tenant, r.started_at "
        "FROM records r CROSS JOIN LATERAL jsonb_array_elements(r.chunks) "
        "WITH ORDINALITY AS c(value, at) WHERE r.id >= :low AND r.id < :high"
    ),
    "sqlite": (
        "SELECT r.id, c.key, CAST(json_extract(c.value, '$.id') AS VARCHAR), "
        "CASE WHEN json_type(c.value, '$.score') IN ('real', 'integer') "
        "THEN json_extract(c.value, '$.score') END, r.tenant, r.started_at "
        "FROM records r, json_each(r.chunks) c WHERE r.id >= :low AND r.id < :high"
    ),
}


def upgrade() -> None:
    op.create_table(
        "chunks",
        sa.Column("record_id", sa.Integer(), nullable=False),
        sa.Column("position", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("doc_id", sa.Text(), nullable=True),
        sa.Column("score", sa.Float(), nullable=True),
        sa.Column("tenant", sa.String(200), nullable=True),
        sa.Column("started_at", sa.DateTime, nullable=False),
        sa.ForeignKeyConstraint(
            ["record_id"], ["records.id"], name="fk_chunks_record_id_records", ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("record_id", "position", name="pk_chunks"),
    )
    _backfill()
    # Built after the backfill: one sort, not an update per row.
    op.create_index("ix_chunks_tenant_started_at", "chunks", ["tenant", "started_at"])


def _backfill() -> None:
    bind = op.get_bind()
    select = _BACKFILL[bind.dialect.name]
    insert = sa.text(
        f"INSERT INTO chunks (record_id, position, doc_id, score, tenant, started_at) {select}"
    )
    # Batches by id: each ends before the first record of the next, so no statement
    # expands more than BATCH records' chunk arrays at once.
    high_of = sa.text("SELECT id FROM records WHERE id >= :low ORDER BY id LIMIT 1 OFFSET :n")
    low, top = bind.execute(sa.text("SELECT min(id), max(id) FROM records")).one()
    while low is not None:
        high = bind.execute(high_of, {"low": low, "n": BATCH}).scalar()
        bind.execute(insert, {"low": low, "high": top + 1 if high is None else high})
        low = high


def downgrade() -> None:
    op.drop_index("ix_chunks_tenant_started_at", "chunks")
    op.drop_table("chunks")
