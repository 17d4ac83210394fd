"""A row per evaluation and claim, filled from the evaluations stored so far.

Revision ID: 0018
Revises: 0017
Create Date: 2026-12-01
"""

import sqlalchemy as sa
from alembic import op

revision = "0018"
down_revision = "0017"
branch_labels = None
depends_on = None

# Evaluations read per statement: one batch's claim arrays are expanded at a time.
BATCH = 5000

_COLUMNS = "evaluation_id, position, record_id, judge, verdict, chunk, critical, stage, confidence"

# The rows `evaluations.save_evaluation` writes for a new evaluation: position from 0; a
# cited chunk that cannot be a position (a judge may cite any number) is NULL.
_BACKFILL = {
    "postgresql": (
        "SELECT e.id, c.ord - 1, e.record_id, e.judge, c.value ->> 'verdict', "
        "CASE WHEN c.value ->> 'chunk' ~ '^[0-9]{1,9}$' "
        "THEN (c.value ->> 'chunk')::integer END, "
        "coalesce((c.value ->> 'critical')::boolean, false), "
        "c.value ->> 'stage', (c.value ->> 'confidence')::double precision "
        "FROM evaluations e CROSS JOIN LATERAL "
        "jsonb_array_elements(e.claims) WITH ORDINALITY AS c(value, ord) "
        "WHERE e.id >= :low AND e.id < :high AND jsonb_typeof(e.claims) = 'array'"
    ),
    "sqlite": (
        "SELECT e.id, CAST(c.key AS INTEGER), e.record_id, e.judge, "
        "json_extract(c.value, '$.verdict'), CASE WHEN json_type(c.value, '$.chunk') = 'integer' "
        "AND json_extract(c.value, '$.chunk') BETWEEN 0 AND 999999999 "
        "THEN json_extract(c.value, '$.chunk') END, "
        "coalesce(json_extract(c.value, '$.critical'), 0), json_extract(c.value, '$.stage'), "
        "json_extract(c.value, '$.confidence') "
        "FROM evaluations e, json_each(e.claims) c "
        "WHERE e.id >= :low AND e.id < :high AND json_type(e.claims) = 'array'"
    ),
}


def upgrade() -> None:
    op.create_table(
        "claims",
        sa.Column("evaluation_id", sa.Integer(), nullable=False),
        sa.Column("position", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("record_id", sa.Integer(), nullable=False),
        sa.Column("judge", sa.String(200), nullable=False),
        sa.Column("verdict", sa.String(20), nullable=False),
        sa.Column("chunk", sa.Integer(), nullable=True),
        sa.Column("critical", sa.Boolean(), nullable=False),
        sa.Column("stage", sa.String(10), nullable=True),
        sa.Column("confidence", sa.Float(), nullable=True),
        sa.ForeignKeyConstraint(
            ["evaluation_id"],
            ["evaluations.id"],
            name="fk_claims_evaluation_id_evaluations",
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["record_id"], ["records.id"], name="fk_claims_record_id_records", ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("evaluation_id", "position", name="pk_claims"),
    )
    _backfill()
    # Built after the backfill: one sort per index, not an update per row.
    op.create_index(
        "ix_claims_judge_verdict_record_id", "claims", ["judge", "verdict", "record_id", "chunk"]
    )
    op.create_index("ix_claims_record_id", "claims", ["record_id"])


def _backfill() -> None:
    bind = op.get_bind()
    insert = sa.text(f"INSERT INTO claims ({_COLUMNS}) {_BACKFILL[bind.dialect.name]}")
    # Batches by id: each ends before the first evaluation of the next.
    high_of = sa.text("SELECT id FROM evaluations WHERE id >= :low ORDER BY id LIMIT 1 OFFSET :n")
    low, top = bind.execute(sa.text("SELECT min(id), max(id) FROM evaluations")).one()
    while low is not None:
        high = bind.execute(high_of, {"low": low, "n": BATCH}).scalar()
        bind.execute(insert, {"low": low, "high": top + 1 if high is None else high})
        low = high


def downgrade() -> None:
    op.drop_index("ix_claims_record_id", "claims")
    op.drop_index("ix_claims_judge_verdict_record_id", "claims")
    op.drop_table("claims")
