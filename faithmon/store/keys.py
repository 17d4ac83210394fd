"""API keys: their hashes, scopes and tenants (the key itself is never stored)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

import sqlalchemy as sa
from sqlalchemy.orm import Session

from ..model import ApiKey
from .tables import ApiKeyRow


def _to_key(row: ApiKeyRow) -> ApiKey:
    return ApiKey(
        id=row.id,
        prefix=row.prefix,
        key_hash=row.key_hash,
        scopes=tuple(row.scopes),
        tenant=row.tenant,
        name=row.name,
        created_at=row.created_at,
        revoked_at=row.revoked_at,
        sessions_ended_at=row.sessions_ended_at,
    )


def create_key(
    session: Session,
    prefix: str,
    key_hash: str,
    scopes: Sequence[str],
    tenant: str | None = None,
    name: str = "",
) -> ApiKey:
    row = ApiKeyRow(
        prefix=prefix,
        key_hash=key_hash,
        scopes=sorted(scopes),
        tenant=tenant,
        name=name,
        created_at=datetime.now(UTC),
    )
    session.add(row)
    session.flush()
    return _to_key(row)


def list_keys(session: Session, active_only: bool = False) -> list[ApiKey]:
    query = sa.select(ApiKeyRow).order_by(ApiKeyRow.id)
    if active_only:
        query = query.where(ApiKeyRow.revoked_at.is_(None))
    return [_to_key(row) for row in session.scalars(query)]


def revoke_key(session: Session, key_id: int) -> bool:
    """Revoke a key; False when there is no such active key."""
    result = session.execute(
        sa.update(ApiKeyRow)
        .where(ApiKeyRow.id == key_id, ApiKeyRow.revoked_at.is_(None))
        .values(revoked_at=datetime.now(UTC))
    )
    return bool(result.rowcount)  # type: ignore[attr-defined]


def find_key(session: Session, key_hash: str) -> ApiKey | None:
    row = session.scalar(sa.select(ApiKeyRow).where(ApiKeyRow.key_hash == key_hash))
    return _to_key(row) if row is not None else None


def end_sessions(session: Session, key_id: int, at: datetime) -> None:
    """End the dashboard sessions ``key_id`` opened before ``at`` (a log-out)."""
    row = session.get(ApiKeyRow, key_id)
    if row is not None:
        row.sessions_ended_at = at
