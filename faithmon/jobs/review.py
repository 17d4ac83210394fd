"""The review queue's job: read the evaluations made since the last run and queue those
the policy picks (:mod:`faithmon.review.queue`), per tenant, with their reason, priority
and inclusion probability. Runs after scoring; idempotent (one item per evaluation)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import UTC, datetime

from ..review.queue import QueuePolicy, pick
from ..store import Sessions
from ..store import review as store_review

logger = logging.getLogger(__name__)


def fill_queue(
    sessions: Sessions,
    judge_name: str,
    policy: QueuePolicy,
    now: Callable[[], datetime] = lambda: datetime.now(UTC),
    batch: int = 500,
) -> int:
    """Queue what the policy picks of the judge's new evaluations; returns items added."""
    added = 0
    while True:
        with sessions() as session, session.begin():
            scored = store_review.new_evaluations(session, judge_name, batch)
            if not scored:
                break
            for one in scored:
                chosen = pick(one.trace_id, one.judgement, policy)
                if chosen is not None:
                    store_review.add_item(
                        session,
                        one,
                        chosen.reason,
                        chosen.priority,
                        chosen.inclusion_probability,
                        chosen.reviews,
                        now(),
                    )
                    added += 1
            store_review.advance(session, judge_name, scored[-1].evaluation_id)
        if len(scored) < batch:
            break
    if added:
        logger.info("faithmon: %d evaluations queued for review", added)
    return added
