"""Ingest's writes, with one bad record never blocking a batch.

A batch the database refuses for a data reason (a value it will not take, a
constraint) is split in halves until the bad records are found; each of those
is stored as ``invalid`` with the reason and nothing of its content, and the
rest is saved. Only an infrastructure failure (connection, disk, lock, schema)
reaches the caller, as StoreUnavailable, so the receiver answers 503 and keeps
the batch. A record that cannot be stored even as ``invalid`` is counted and
logged by trace id.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TypeVar

from sqlalchemy import exc as sa_exc
from sqlalchemy.orm import Session

from ..errors import StoreUnavailable
from ..model import DroppedTrace, Feedback, RagRecord, SamplingTally
from . import Sessions, sampling
from . import records as store_records
from ._dialect import insert_for
from .tables import RecordRow

logger = logging.getLogger(__name__)

INVALID = "invalid"
T = TypeVar("T")


@dataclass
class WriteStats:
    """What the writes met, for the receiver's counters."""

    invalid: int = 0
    unstorable: list[str] = field(default_factory=list)


def _is_data_error(error: BaseException) -> bool:
    # Connection, disk and lock failures are OperationalError or InterfaceError;
    # a missing table is a ProgrammingError: none of them is the record's fault.
    if isinstance(error, sa_exc.OperationalError | sa_exc.InterfaceError):
        return False
    if isinstance(error, sa_exc.ProgrammingError):
        return False
    if isinstance(error, sa_exc.DataError | sa_exc.IntegrityError):
        return True
    if isinstance(error, sa_exc.DBAPIError):
        return False
    # StatementError without a DBAPI cause: a value the driver could not encode.
    return isinstance(error, sa_exc.StatementError | ValueError | TypeError)


def _reason(error: BaseException) -> str:
    """The error's class and the first line of the database's message, cut short."""
    cause = getattr(error, "orig", None) or error
    first = str(cause).strip().splitlines()[0] if str(cause).strip() else ""
    return f"{type(cause).__name__}: {first}"[:300]


def _write(sessions: Sessions, work: Callable[[Session], object]) -> None:
    try:
        with sessions() as session, session.begin():
            work(session)
    except sa_exc.SQLAlchemyError as error:
        if _is_data_error(error):
            raise
        raise StoreUnavailable(type(error).__name__) from error


def _isolate(
    sessions: Sessions,
    items: Sequence[T],
    work: Callable[[Session, Sequence[T]], object],
    on_bad: Callable[[T, BaseException], None],
) -> None:
    """Write ``items``; a data failure splits the batch until each bad item is alone."""
    try:
        _write(sessions, lambda session: work(session, items))
        return
    except StoreUnavailable:
        raise
    except Exception as error:
        if len(items) == 1:
            on_bad(items[0], error)
            return
    middle = len(items) // 2
    _isolate(sessions, items[:middle], work, on_bad)
    _isolate(sessions, items[middle:], work, on_bad)


def _store_invalid(
    sessions: Sessions,
    record: RagRecord,
    error: BaseException,
    stats: WriteStats,
    received_at: datetime,
) -> None:
    reason = _reason(error)
    logger.error(
        "faithmon: trace %s refused by the database (%s); stored as invalid",
        record.trace_id,
        type(getattr(error, "orig", None) or error).__name__,
    )
    row = {
        "trace_id": record.trace_id,
        **store_records.received_columns(record, received_at),
        "question": "",
        "answer": "",
        "chunks": [],
        "labels": {},
        "status": INVALID,
        "sample_reason": record.sample_reason[:100],
        "last_error": reason,
    }

    def write(session: Session) -> None:
        statement = insert_for(session, RecordRow).values(row)
        session.execute(statement.on_conflict_do_nothing(index_elements=["trace_id"]))

    try:
        _write(sessions, write)
    except StoreUnavailable:
        raise
    except Exception as again:
        stats.unstorable.append(record.trace_id)
        logger.error(
            "faithmon: trace %s could not be stored even as invalid (%s); it is lost",
            record.trace_id,
            type(again).__name__,
        )
        return
    stats.invalid += 1


def _utc_now() -> datetime:
    return datetime.now(UTC)


def save_records(
    sessions: Sessions,
    records: Sequence[RagRecord],
    stats: WriteStats,
    now: Callable[[], datetime] = _utc_now,
) -> None:
    """Save records, isolating those the database refuses; raises StoreUnavailable.

    ``now`` is the receiver's clock: read once, it is when each record was received.
    """
    received_at = now()
    _isolate(
        sessions,
        records,
        lambda session, items: store_records.save_records(session, items, received_at),
        lambda record, error: _store_invalid(sessions, record, error, stats, received_at),
    )


def save_feedback(sessions: Sessions, items: Sequence[Feedback]) -> None:
    """Save feedback; an item the database refuses is logged by trace id and dropped."""

    def bad(item: Feedback, error: BaseException) -> None:
        logger.error(
            "faithmon: feedback for trace %s refused by the database (%s); dropped",
            item.trace_id,
            type(error).__name__,
        )

    _isolate(sessions, items, store_records.save_feedback, bad)


def save_sampling(
    sessions: Sessions,
    tallies: Sequence[SamplingTally],
    dropped: Sequence[DroppedTrace],
) -> None:
    """Save sampling counts; a refused tally or drop is logged and dropped."""

    def bad(item: SamplingTally | DroppedTrace, error: BaseException) -> None:
        logger.error(
            "faithmon: a sampling %s was refused by the database (%s); dropped",
            "count" if isinstance(item, SamplingTally) else "drop",
            type(error).__name__,
        )

    def write(session: Session, items: Sequence[SamplingTally | DroppedTrace]) -> None:
        sampling.save_sampling(
            session,
            [i for i in items if isinstance(i, SamplingTally)],
            [i for i in items if isinstance(i, DroppedTrace)],
        )

    items: list[SamplingTally | DroppedTrace] = [*tallies, *dropped]
    _isolate(sessions, items, write, bad)
