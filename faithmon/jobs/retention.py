"""The retention job: roll old records into daily aggregates and delete them."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta

from ..store import Sessions
from ..store import retention as store_retention

logger = logging.getLogger(__name__)


BATCH = 2000
"""Records deleted per transaction."""


def apply_retention(
    sessions: Sessions,
    days: int,
    dimensions: Sequence[str],
    judge_name: str,
    now: Callable[[], datetime] = lambda: datetime.now(UTC),
) -> int:
    """Delete records received more than ``days`` ago (after rolling them into daily
    aggregates)."""
    if days <= 0:
        return 0
    cutoff = now() - timedelta(days=days)
    deleted = 0
    while True:
        # One bounded batch per transaction, so readers and workers wait a moment at most.
        with sessions() as session, session.begin():
            batch = store_retention.apply_retention(
                session, cutoff, dimensions, judge_name, limit=BATCH
            )
        deleted += batch
        if batch < BATCH:
            break
    if deleted:
        logger.info("faithmon: retention deleted %d records received before %s", deleted, cutoff)
    return deleted
