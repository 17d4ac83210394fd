"""GET /metrics: Prometheus counters per segment, kept by the worker as it scores."""

from __future__ import annotations

import urllib.request
from datetime import timedelta

from sqlalchemy.orm import Session, sessionmaker
from starlette.applications import Starlette

from faithmon.api import metrics as metrics_api
from faithmon.jobs import score_pending
from faithmon.judge import OfflineJudge
from faithmon.model import Chunk, RagRecord
from faithmon.store import records as store_records
from tests.servers import serve_in_thread
from tests.timing import days_ago

CONTEXT = "Order A17 shipped on 3 March by courier."
T0 = days_ago(1)


def record(n: int, answer: str, route: str) -> RagRecord:
    return RagRecord(
        trace_id=f"{n + 1:032x}",
        question="q",
        answer=answer,
        chunks=(Chunk(0, CONTEXT),),
        labels={"route": route},
        started_at=T0 + timedelta(seconds=n),
    )


def scrape(sessions: sessionmaker[Session]) -> dict[str, float]:
    app = Starlette(routes=[metrics_api.route(sessions)])
    with serve_in_thread(app) as url, urllib.request.urlopen(url + "/metrics", timeout=10) as r:
        assert r.headers["Content-Type"].startswith("text/plain; version=0.0.4")
        text = r.read().decode()
    samples = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            name, value = line.rsplit(" ", 1)
            samples[name] = float(value)
    return samples


def test_metrics_count_each_segment_once_per_evaluation(sessions: sessionmaker[Session]) -> None:
    """Counters, histogram buckets and queue depth match what the worker scored."""
    bad = CONTEXT + " It arrives on 9 March."
    with sessions.begin() as session:
        store_records.save_records(
            session,
            [
                record(0, CONTEXT, "shipping"),
                record(1, bad, "shipping"),
                record(2, CONTEXT, "billing"),
                record(3, CONTEXT, "billing"),
            ],
        )
    judge = OfflineJudge()
    assert score_pending(sessions, judge, batch=2, metric_dimensions=("route",)) == 4
    assert score_pending(sessions, judge, metric_dimensions=("route",)) == 0
    with sessions.begin() as session:
        store_records.save_records(session, [record(9, CONTEXT, "billing")])
    samples = scrape(sessions)
    overall = f'judge="{judge.name}",segment="overall"'
    shipping = f'judge="{judge.name}",segment="route",value="shipping"'
    assert samples[f"faithmon_evaluations_total{{{overall}}}"] == 4
    assert samples[f"faithmon_unsupported_records_total{{{overall}}}"] == 1
    assert samples[f"faithmon_critical_unsupported_records_total{{{shipping}}}"] == 1
    assert samples[f'faithmon_faithfulness_bucket{{{shipping},le="0.5"}}'] == 1
    assert samples[f'faithmon_faithfulness_bucket{{{shipping},le="+Inf"}}'] == 2
    assert samples[f"faithmon_faithfulness_sum{{{overall}}}"] == 3.5
    # Two batches: the second adds its buckets to those the first stored.
    assert samples[f'faithmon_faithfulness_bucket{{{overall},le="0.5"}}'] == 1
    assert samples[f'faithmon_faithfulness_bucket{{{overall},le="1.0"}}'] == 4
    assert samples["faithmon_queue_depth"] == 1
    assert samples['faithmon_records{status="scored"}'] == 4
