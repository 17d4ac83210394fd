"""The whole loop on real parts: shim → OTLP exporter → `faithmon serve` → worker → alerts."""

from __future__ import annotations

import json
import signal
import subprocess
from collections.abc import Iterator
from typing import Any

import pytest

import faithmon_instrumentation as fm
from tests.e2e.helpers import faithmon

# The dialect is not the point here: PostgreSQL runs in the second_backend tier.
pytestmark = pytest.mark.one_backend

CONTEXT = "Order A17 shipped on 3 March by courier."
EMAIL = "jane.doe@example.com"


@pytest.fixture
def shim(server: tuple[str, subprocess.Popen[str]]) -> Iterator[None]:
    fm.setup(endpoint=server[0], service_name="e2e-app")
    yield
    fm.shutdown()


def send(question: str, chunks: list[Any], answer: str, model: str, route: str) -> None:
    with fm.rag_span(question, route=route, tenant="acme") as rag:
        rag.record_retrieval(chunks, retriever="bm25", retriever_version="v1")
        rag.record_answer(answer, model=model)


@pytest.mark.usefixtures("shim")
def test_end_to_end(env: dict[str, str], server: tuple[str, subprocess.Popen[str]]) -> None:
    """Traces sent by the shim are stored scrubbed, scored, and drift fires for one model."""
    chunk = {"id": "kb-1", "text": CONTEXT, "score": 0.9, "metadata": {"lang": "en"}}
    for n in range(30):
        send("Where is order A17?", [chunk], CONTEXT, "m1", ("a", "b")[n % 2])
    for n in range(20):
        send(
            "Where is order A17?",
            [chunk],
            CONTEXT + " It arrives tomorrow.",
            "m2",
            ("a", "b")[n % 2],
        )
    send("What is the weather?", [], "I can't help with that.", "m1", "a")
    send(
        f"I am {EMAIL}, where is order A17?",
        [f"Contact {EMAIL}. {CONTEXT}"],
        f"Contact {EMAIL.upper()}. {CONTEXT}",
        "m1",
        "a",
    )
    assert fm.flush()

    _, process = server
    process.send_signal(signal.SIGTERM)  # the server saves buffered traces as it stops
    process.communicate(timeout=60)
    assert process.returncode in (0, -signal.SIGTERM)

    assert "scored 51 records" in faithmon(env, "worker", "--once")
    records = json.loads(faithmon(env, "traces", "list", "--json", "--limit", "1000"))
    assert len(records) == 52
    assert all(len(r["trace_id"]) == 32 for r in records)
    by_status: dict[str, int] = {}
    for r in records:
        by_status[r["status"]] = by_status.get(r["status"], 0) + 1
    assert by_status == {"scored": 51, "no_context": 1}

    [no_context] = [r for r in records if r["status"] == "no_context"]
    assert no_context["faithfulness"] is None and no_context["evaluations"] == []

    faithful = [r for r in records if r["labels"].get("model") == "m1" and r["chunks"]]
    assert {r["faithfulness"] for r in faithful} == {1.0}, [
        (r["answer"], r["evaluations"]) for r in faithful if r["faithfulness"] != 1.0
    ]
    sample = faithful[-1]
    assert sample["chunks"][0] == {
        "id": "kb-1",
        "text": CONTEXT,
        "score": 0.9,
        "metadata": {"lang": "en"},
    }
    assert sample["labels"] == {
        "service": "e2e-app",
        "model": "m1",
        "retriever": "bm25",
        "retriever_version": "v1",
        "route": sample["labels"]["route"],
        "tenant": "acme",
    }
    drifted = [r for r in records if r["labels"].get("model") == "m2"]
    assert len(drifted) == 20 and {r["faithfulness"] for r in drifted} == {0.5}
    claims = drifted[0]["evaluations"][0]["claims"]
    assert [(c["verdict"], c["chunk"]) for c in claims] == [("supported", 0), ("unsupported", None)]

    [pii] = [r for r in records if "where is order" in r["question"] and "<EMAIL_" in r["question"]]
    token = pii["question"].split()[2].rstrip(",")
    assert (
        token.startswith("<EMAIL_") and token in pii["answer"] and token in pii["chunks"][0]["text"]
    )
    assert pii["faithfulness"] == 1.0
    assert EMAIL not in json.dumps(records) and EMAIL.upper() not in json.dumps(records)

    alerts = json.loads(faithmon(env, "alerts", "list", "--json"))
    assert [(a["segment"], a["state"], a["rule"]) for a in alerts] == [
        ({"model": "m2"}, "firing", "faithfulness_drift")
    ]
    assert alerts[0]["severity"] == "critical" and alerts[0]["opened_at"]


def test_big_evidence_arrives_whole_and_cut_evidence_is_not_scored(
    env: dict[str, str], server: tuple[str, subprocess.Popen[str]]
) -> None:
    """50 chunks of 4 KB arrive whole; chunks an app's provider cut are stored unscored."""
    url, process = server
    texts = [f"Chunk {i:02d} says " + "z" * 4080 for i in range(50)]
    fm.setup(endpoint=url, service_name="big-evidence")
    with fm.rag_span("What do the chunks say?", route="big") as rag:
        rag.record_retrieval([{"text": t, "id": f"d{i}"} for i, t in enumerate(texts)])
        rag.record_rerank(list(reversed(texts[:5])), reranker="xenc", reranker_version="2")
        rag.record_answer(texts[4][:20] + ".", model="m1")
        whole_trace = rag.trace_id
    fm.record_feedback(whole_trace, "thumbs_down")
    assert fm.flush()
    fm.shutdown()

    # An app whose own provider cuts values at 1,000 characters.
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.trace import SpanLimits, TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor

    app_provider = TracerProvider(span_limits=SpanLimits(max_span_attribute_length=1000))
    app_provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(url + "/v1/traces")))
    fm.setup(tracer_provider=app_provider)
    try:
        with fm.rag_span("Cut?", route="cut") as rag:
            rag.record_retrieval(texts[:3])
            rag.record_answer(texts[0][:20] + ".", model="m1")
            cut_trace = rag.trace_id
    finally:
        fm.shutdown()
        app_provider.shutdown()

    process.send_signal(signal.SIGTERM)
    process.communicate(timeout=60)
    faithmon(env, "worker", "--once")
    records = {
        r["trace_id"]: r
        for r in json.loads(faithmon(env, "traces", "list", "--json", "--limit", "10"))
    }
    whole = records[whole_trace]
    assert whole["status"] == "scored" and whole["incomplete_reason"] is None
    assert [c["text"] for c in whole["chunks"]] == list(reversed(texts[:5]))
    assert [c["text"] for c in whole["retrieved"]] == texts
    assert [c["id"] for c in whole["retrieved"]] == [f"d{i}" for i in range(50)]
    assert whole["labels"]["reranker_version"] == "2"
    assert [f["value"] for f in whole["feedback"]] == ["thumbs_down"]
    cut = records[cut_trace]
    assert cut["status"] == "incomplete_evidence"
    assert cut["incomplete_reason"] == "3 of 3 chunks arrived cut or altered"
    assert cut["evaluations"] == [] and cut["faithfulness"] is None
