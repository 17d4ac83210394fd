"""Fingerprints of the secrets every faithmon process must share (the scrub key), as
stored: the first process to ask records its own; every later one is told the first."""

from __future__ import annotations

from sqlalchemy.orm import Session

from ..model.health import KeyFingerprint
from ._dialect import insert_for
from .tables import FingerprintRow


def first_recorded(session: Session, name: str, mine: KeyFingerprint) -> KeyFingerprint:
    """The fingerprint recorded under ``name``: ``mine``, when none was yet.

    Insert-or-nothing, then read: of processes starting at once, one records and the
    others read its row, so two keys never both count as the first.
    """
    session.execute(
        insert_for(session, FingerprintRow)
        .values(
            name=name,
            fingerprint=mine.fingerprint,
            recorded_by=mine.recorded_by[:500],
            recorded_at=mine.recorded_at,
        )
        .on_conflict_do_nothing(index_elements=["name"])
    )
    row = session.get_one(FingerprintRow, name)
    return KeyFingerprint(row.fingerprint, row.recorded_by, row.recorded_at)


def record(session: Session, name: str, mine: KeyFingerprint) -> KeyFingerprint | None:
    """Record ``mine`` under ``name`` in place of any other (a rotated key); returns the
    one it replaces."""
    row = session.get(FingerprintRow, name, with_for_update=True)
    before = (
        None if row is None else KeyFingerprint(row.fingerprint, row.recorded_by, row.recorded_at)
    )
    if row is None:
        row = FingerprintRow(name=name)
        session.add(row)
    row.fingerprint = mine.fingerprint
    row.recorded_by = mine.recorded_by[:500]
    row.recorded_at = mine.recorded_at
    return before
