"""The review loop's jobs: read the evaluations made since the last run and queue those the
policy picks (:mod:`faithmon.review.queue`), per tenant, with their reason, priority and
inclusion probability (after scoring; idempotent, one item per evaluation); and raise
``judge_disagreement`` when the reviewers' labels say the judge disagrees with them."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from datetime import UTC, datetime

from ..alerts import Policy, deliver, to_tell
from ..model import Alert, AlertSink
from ..review.alerting import RULE, disagreement_signal
from ..review.queue import QueuePolicy, pick
from ..store import Sessions, review_thresholds
from ..store import review as store_review
from ._shared import reconcile_kinds

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
            # The overall threshold in use for this judge: its guard band goes to people.
            kept = review_thresholds.latest_thresholds(session, judge_name).get("")
            band = (float(kept["guard_low"]), float(kept["guard_high"])) if kept else None
            for one in scored:
                chosen = pick(one.trace_id, one.judgement, policy, band)
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


def check_disagreement(
    sessions: Sessions,
    judge_name: str,
    min_kappa: float,
    min_labels: int,
    sinks: Sequence[AlertSink] = (),
    now: Callable[[], datetime] = lambda: datetime.now(UTC),
    policy: Policy | None = None,
) -> list[Alert]:
    """Raise or resolve ``judge_disagreement`` for the judge from the reviewers' labels."""
    policy = policy or Policy()
    clock = now()
    with sessions() as session, session.begin():
        reviewed = store_review.reviewed(session)
        changed = reconcile_kinds(
            session,
            [RULE],
            lambda _: True,
            lambda _: [disagreement_signal(judge_name, reviewed, min_kappa, min_labels)],
            clock,
            policy,
        )
    deliver(sinks, to_tell(changed))
    return changed
