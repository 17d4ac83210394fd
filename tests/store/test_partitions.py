"""/metrics and the retention roll-ups segment as drift does: with ``tenant`` a dimension,
each tenant is a partition of its own and no figure mixes tenants."""

from __future__ import annotations

from dataclasses import replace

from sqlalchemy.orm import Session, sessionmaker

from faithmon.drift import DriftConfig
from faithmon.jobs import apply_retention, score_pending
from faithmon.judge import OfflineJudge
from faithmon.model import Claim, Judgement, segment_key, segments_of
from faithmon.store import metrics
from faithmon.store import records as store_records
from faithmon.store import retention as store_retention
from tests.jobs.test_sampling_and_retention import AGO, T0, old_record

DIMENSIONS = ("route", "tenant")
LABELS = [{"route": "billing", "tenant": "acme"}, {"route": "billing", "tenant": "globex"}]


def drift_keys() -> set[str]:
    config = DriftConfig(dimensions=DIMENSIONS)
    return {
        segment_key(s)
        for labels in LABELS
        for s in segments_of(labels, config.dimensions, config.partition)
    }


def test_metrics_count_the_segments_drift_watches(sessions: sessionmaker[Session]) -> None:
    judged = Judgement("j", "ok", (Claim("fine", "supported", chunk=0, quote="x"),))
    with sessions.begin() as session:
        metrics.count_evaluations(session, [(labels, judged) for labels in LABELS], DIMENSIONS)
    with sessions() as session:
        keys = {segment_key(r["segment"]) for r in metrics.snapshot(session)["segments"]}
    assert keys == drift_keys()
    assert "route=billing" not in keys  # one segment over both tenants: gone


def test_retention_rolls_up_the_segments_drift_watches(sessions: sessionmaker[Session]) -> None:
    made = [replace(old_record(n, 40, "billing"), labels=LABELS[n % 2]) for n in range(4)]
    with sessions.begin() as session:
        store_records.save_records(session, made, AGO)
    score_pending(sessions, OfflineJudge())
    assert apply_retention(sessions, 30, DIMENSIONS, OfflineJudge().name, now=lambda: T0) == 4
    with sessions() as session:
        keys = {segment_key(d["segment"]) for d in store_retention.segment_daily(session)}
    assert keys == drift_keys()
