"""Retention by the time a record was received: an index for it, and the starts of the
records stored so far clamped to that time where far from it, as saves now do.

Revision ID: 0027
Revises: 0026
Create Date: 2026-12-03
"""

import sqlalchemy as sa
from alembic import op

revision = "0027"
down_revision = "0026"
branch_labels = None
depends_on = None

# The rule of `records.received_columns` when this was written (limits and notes alike):
# a start more than an hour after the record was received, or more than 365 days
# before, becomes the time received. A migration imports nothing of faithmon's.
_AHEAD_NOTE = "started_at: more than 1 hour after it was received, set to that time"
_BEHIND_NOTE = "started_at: more than 365 days before it was received, set to that time"
_AHEAD = {
    "postgresql": "started_at > ingested_at + interval '1 hour'",
    "sqlite": "julianday(started_at) > julianday(ingested_at) + 1.0 / 24",
}
_BEHIND = {
    "postgresql": "started_at < ingested_at - interval '365 days'",
    "sqlite": "julianday(started_at) < julianday(ingested_at) - 365",
}
# The repairs with one more note; an empty list is stored as NULL or as JSON null.
_NOTED = {
    "postgresql": (
        "CASE WHEN jsonb_typeof(repairs) = 'array' THEN repairs ELSE '[]'::jsonb END "
        "|| jsonb_build_array(CAST(:note AS TEXT))"
    ),
    "sqlite": (
        "json_insert(CASE WHEN json_type(repairs) = 'array' THEN repairs ELSE '[]' END, "
        "'$[#]', :note)"
    ),
}


def upgrade() -> None:
    bind = op.get_bind()
    dialect = bind.dialect.name
    ahead, behind = _AHEAD[dialect], _BEHIND[dialect]
    far = f"SELECT id FROM records WHERE {ahead} OR {behind}"
    # The copies of the start first, while the records still show which are far.
    for table in ("chunks", "record_documents"):
        bind.execute(
            sa.text(
                f"UPDATE {table} SET started_at = (SELECT r.ingested_at FROM records r "
                f"WHERE r.id = {table}.record_id) WHERE record_id IN ({far})"
            )
        )
    for where, note in ((ahead, _AHEAD_NOTE), (behind, _BEHIND_NOTE)):
        bind.execute(
            sa.text(
                f"UPDATE records SET started_at = ingested_at, repairs = {_NOTED[dialect]} "
                f"WHERE {where}"
            ),
            {"note": note},
        )
    op.create_index("ix_records_ingested_at_id", "records", ["ingested_at", "id"])


def downgrade() -> None:
    # The clamped starts stay clamped: the app's times were not kept.
    op.drop_index("ix_records_ingested_at_id", "records")
