"""Per-record outcomes of a judge's evaluations, with their post-stratified sampling weights."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime

from sqlalchemy import and_, select
from sqlalchemy.orm import Session

from ..model import (
    Outcome,
)
from .tables import (
    EvaluationRow,
    JudgeTrustRow,
    RecordRow,
    SamplingCountRow,
)

ORDINARY = ("sampled", "rule:minimum")
"""Kept with no regard to content: the stratum the sampling ratio applies to."""
DROPPED_ORDINARY = ("sampled_out", "rate_limited")


def sampling_weights(
    session: Session, since: datetime | None = None
) -> dict[datetime, list[tuple[dict[str, str], float]]]:
    """hour → [(sampling segment, weight of its ordinary records)].

    A record kept by the ratio (or a segment's minimum) stands for every record
    of its segment and hour that the ratio or a rate limit dropped too; a record
    kept by a keep-always rule stands for itself (weight 1), since every record
    matching the rule was kept. This post-stratification is what makes rates
    unbiased when rules keep the bad records more often.
    """
    query = select(SamplingCountRow).where(SamplingCountRow.reason.in_(ORDINARY + DROPPED_ORDINARY))
    if since is not None:
        query = query.where(SamplingCountRow.hour >= since)
    tallies: dict[tuple[datetime, str], tuple[dict[str, str], list[int]]] = {}
    for row in session.scalars(query):
        _, counts = tallies.setdefault((row.hour, row.segment_key), (dict(row.segment), [0, 0]))
        counts[0] += row.count
        if row.reason in ORDINARY:
            counts[1] += row.count
    weights: dict[datetime, list[tuple[dict[str, str], float]]] = {}
    for (hour, _), (segment, (seen, kept)) in tallies.items():
        if kept:
            weights.setdefault(hour, []).append((segment, seen / kept))
    return weights


def _weight(
    weights: Mapping[datetime, list[tuple[dict[str, str], float]]],
    started_at: datetime,
    labels: Mapping[str, str],
    reason: str,
) -> float:
    if reason not in ORDINARY:
        return 1.0
    hour = started_at.replace(minute=0, second=0, microsecond=0)
    for segment, weight in weights.get(hour, ()):
        if all(labels.get(k) == v for k, v in segment.items()):
            return weight
    return 1.0


def outcomes(session: Session, judge: str, since: datetime | None = None) -> list[Outcome]:
    """``ok`` evaluations by ``judge``, oldest trace first, reduced to drift outcomes."""
    query = (
        select(
            RecordRow.trace_id,
            RecordRow.started_at,
            RecordRow.labels,
            RecordRow.sample_reason,
            EvaluationRow.claims,
        )
        .join(EvaluationRow, EvaluationRow.record_id == RecordRow.id)
        .where(and_(EvaluationRow.judge == judge, EvaluationRow.status == "ok"))
        .order_by(RecordRow.started_at, RecordRow.id)
    )
    if since is not None:
        query = query.where(RecordRow.started_at >= since)
    trust = session.scalars(select(JudgeTrustRow).where(JudgeTrustRow.judge == judge)).first()
    if trust is not None:
        # Evaluations made while sentinels showed this judge drifting do not count.
        untrusted = EvaluationRow.created_at >= trust.untrusted_since
        if trust.untrusted_until is not None:
            untrusted = and_(untrusted, EvaluationRow.created_at < trust.untrusted_until)
        query = query.where(~untrusted)
    weights = sampling_weights(session, since)
    result = []
    for trace_id, started_at, labels, reason, claims in session.execute(query):
        bad = [c for c in claims if c["verdict"] != "supported"]
        result.append(
            Outcome(
                trace_id=trace_id,
                at=started_at,
                labels=labels,
                unsupported=bool(bad),
                unsupported_claims=tuple(c["text"] for c in bad),
                critical=any(c.get("critical") for c in bad),
                weight=_weight(weights, started_at, labels, reason),
            )
        )
    return result
