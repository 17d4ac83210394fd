"""GET /metrics from the served app: context- and answer-relevance histograms per segment
beside the faithfulness counters, after the worker scored real records."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import timedelta

import pytest
from sqlalchemy.orm import Session, sessionmaker

from faithmon.api.app import create_app
from faithmon.api.keys import key_hash, new_key
from faithmon.cli import wiring
from faithmon.config import Settings
from faithmon.ingest.pipeline import Pipeline
from faithmon.ingest.sampler import KeepAll
from faithmon.ingest.scrub import identity
from faithmon.jobs import score_pending
from faithmon.judge import OfflineJudge
from faithmon.model import Chunk, RagRecord, Relevance, segments_of
from faithmon.store import keys as store_keys
from faithmon.store import records as store_records
from faithmon.store.metrics import RELEVANCE_BUCKETS
from tests.api.client import call
from tests.servers import serve_in_thread
from tests.timing import days_ago

CONTEXT = "Order A17 shipped on 3 March by courier."
DIMENSIONS = ("route", "tenant")
# (question, answer): on topic, an off-topic question's copy of the chunk, an on-topic
# answer that adds a date, and no question (nothing measured, nothing counted).
ASKED = (
    ("When did order A17 ship?", CONTEXT),
    ("What is the warranty on the kettle?", CONTEXT),
    ("How did order A17 ship?", CONTEXT + " It arrives on 9 March."),
    ("", CONTEXT),
)


@dataclass
class Served:
    url: str
    keys: dict[str, str]
    records: list[RagRecord]


def make_records() -> list[RagRecord]:
    made = []
    for n in range(12):
        question, answer = ASKED[n % len(ASKED)]
        tenant = ("acme", None)[n // 4 % 2]
        made.append(
            RagRecord(
                trace_id=f"{n + 1:032x}",
                question=question,
                answer=answer,
                chunks=(Chunk(0, CONTEXT),),
                labels={
                    "route": ("billing", "shipping")[n % 2],
                    **({"tenant": tenant} if tenant else {}),
                },
                started_at=days_ago(1) + timedelta(seconds=n),
            )
        )
    return made


@pytest.fixture
def served(database_url: str, sessions: sessionmaker[Session]) -> Iterator[Served]:
    made = make_records()
    with sessions.begin() as session:
        store_records.save_records(session, made)
        keys = {}
        for role, tenant in (("operator", None), ("acme", "acme")):
            key, prefix = new_key()
            store_keys.create_key(session, prefix, key_hash(key), ["read"], tenant, name=role)
            keys[role] = key
    assert score_pending(sessions, OfflineJudge(), metric_dimensions=DIMENSIONS) == len(made)
    settings = Settings.from_env(
        {"FAITHMON_DATABASE_URL": database_url, "FAITHMON_SCRUB_KEY": "metrics-test-key-0123"}
    )
    auth = wiring.make_auth(settings, sessions, "127.0.0.1")
    pipeline = Pipeline(lambda batch: None, sampler=KeepAll(), scrubber=identity)
    app = create_app(pipeline, sessions=sessions, auth=auth)
    with serve_in_thread(app) as url:
        yield Served(url, keys, made)


def samples(text: str) -> dict[str, float]:
    found = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            name, value = line.rsplit(" ", 1)
            found[name] = float(value)
    return found


def labels_of(segment: dict[str, str], judge: str) -> str:
    """The /metrics labels of a segment, in the order they are written."""
    if not segment:
        named = {"segment": "overall"}
    elif len(segment) == 1:
        ((name, value),) = segment.items()
        named = {"segment": name, "value": value}
    else:
        named = {"segment": "route", "value": segment["route"], "tenant": segment["tenant"]}
    return ",".join(f'{k}="{v}"' for k, v in sorted({**named, "judge": judge}.items()))


def test_relevance_histograms_per_segment(served: Served) -> None:
    """Each segment the counters hold gets a context- and answer-relevance histogram of
    the evaluations that measured them, bucket by bucket; an answer to no question is not
    counted; a tenant's segments carry its label; a tenant-bound key is refused."""
    status, text, headers = call(served.url, "/metrics", served.keys["operator"])
    assert status == 200 and headers["content-type"].startswith("text/plain; version=0.0.4")
    scraped = samples(text)
    judge = OfflineJudge()
    expected: dict[str, list[Relevance]] = {}
    for record in served.records:
        relevance = judge.judge(record.question, [CONTEXT], record.answer).relevance
        for segment in segments_of(record.labels, DIMENSIONS, "tenant"):
            key = labels_of(segment, judge.name)
            expected.setdefault(key, [])
            if relevance is not None:
                expected[key].append(relevance)
    assert len(expected) == 6  # overall, acme; each route, and each within acme
    assert 'segment="route",tenant="acme",value="billing"' in ",".join(expected)
    for labels, measured in expected.items():
        for name in ("context_relevance", "answer_relevance"):
            values = [getattr(r, name) for r in measured if getattr(r, name) is not None]
            metric = f"faithmon_{name}"
            assert scraped[f"{metric}_count{{{labels}}}"] == len(values) > 0
            assert scraped[f"{metric}_sum{{{labels}}}"] == pytest.approx(sum(values))
            for bound in RELEVANCE_BUCKETS:
                held = sum(v <= bound for v in values)
                assert scraped[f'{metric}_bucket{{{labels},le="{bound!r}"}}'] == held
            assert scraped[f'{metric}_bucket{{{labels},le="+Inf"}}'] == len(values)
    # acme's eight answers: two to the off-topic question, in the lowest bucket, and two
    # to no question, counted by the faithfulness counters only.
    acme = labels_of({"tenant": "acme"}, judge.name)
    assert scraped[f'faithmon_context_relevance_bucket{{{acme},le="0.1"}}'] == 2
    assert scraped[f"faithmon_context_relevance_count{{{acme}}}"] == 6
    assert scraped[f"faithmon_evaluations_total{{{acme}}}"] == 8
    assert "# TYPE faithmon_answer_relevance histogram" in text

    status, _, _ = call(served.url, "/metrics", served.keys["acme"])
    assert status == 403
