"""Evaluation events and metrics leave the worker over real OTLP/HTTP."""

from __future__ import annotations

import http.server
import threading
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
)
from sqlalchemy.orm import Session, sessionmaker

from faithmon.alerts.telemetry import EvaluationTelemetry
from faithmon.jobs import score_pending
from faithmon.judge import OfflineJudge
from faithmon.model import Chunk, RagRecord
from faithmon.store import records as store_records
from tests.timing import days_ago

CONTEXT = "Order A17 shipped on 3 March by courier."
QUESTION = "When did order A17 ship?"


class Collector(http.server.ThreadingHTTPServer):
    """Keeps every OTLP body it receives, by path."""

    bodies: dict[str, list[bytes]]


class Handler(http.server.BaseHTTPRequestHandler):
    def do_POST(self) -> None:  # the stdlib names it so
        length = int(self.headers["Content-Length"])
        self.server.bodies.setdefault(self.path, []).append(self.rfile.read(length))  # type: ignore[attr-defined]
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.end_headers()

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def collector() -> Iterator[Collector]:
    server = Collector(("127.0.0.1", 0), Handler)
    server.bodies = {}
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


def test_each_evaluation_is_an_event_on_its_trace_and_a_metric(
    sessions: sessionmaker[Session], collector: Collector
) -> None:
    """gen_ai.evaluation.result events carry the score on the record's root span, one per
    measure: faithfulness, and context and answer relevance where measured (not for an
    answer to no question), with an unfaithful answer's cause."""
    records = [
        RagRecord(
            trace_id=f"{n + 1:032x}",
            question=QUESTION if n < 2 else "",
            answer=CONTEXT if n else CONTEXT + " It arrives tomorrow.",
            chunks=(Chunk(0, CONTEXT),),
            labels={"route": "shipping"},
            started_at=days_ago(1) + timedelta(seconds=n),
            root_span_id=f"{n + 100:016x}",
        )
        for n in range(3)
    ]
    with sessions.begin() as session:
        store_records.save_records(session, records)
    endpoint = f"http://127.0.0.1:{collector.server_address[1]}"
    telemetry = EvaluationTelemetry(endpoint, ("route",))
    try:
        assert score_pending(sessions, OfflineJudge(), on_evaluation=telemetry) == 3
        telemetry.flush()
    finally:
        telemetry.shutdown()

    events = []
    for body in collector.bodies["/v1/logs"]:
        request = ExportLogsServiceRequest.FromString(body)
        for resource in request.resource_logs:
            for scope in resource.scope_logs:
                events.extend(scope.log_records)
    by_trace: dict[str, dict[str, Any]] = {}
    for event in events:
        assert event.event_name == "gen_ai.evaluation.result"
        attributes = {a.key: a.value for a in event.attributes}
        name = attributes["gen_ai.evaluation.name"].string_value
        by_trace.setdefault(event.trace_id.hex(), {})[name] = (event, attributes)
    assert set(by_trace) == {r.trace_id for r in records}
    measures = {"faithfulness", "context_relevance", "answer_relevance"}
    assert [set(by_trace[r.trace_id]) for r in records] == [measures, measures, {"faithfulness"}]
    first = by_trace[f"{1:032x}"]
    assert {e.span_id.hex() for e, _ in first.values()} == {f"{100:016x}"}
    _, faithful = first["faithfulness"]
    assert faithful["gen_ai.evaluation.score.value"].double_value == 0.5
    assert faithful["gen_ai.evaluation.score.label"].string_value == "unfaithful"
    relevance = OfflineJudge().judge(QUESTION, [CONTEXT], records[0].answer).relevance
    assert relevance is not None and relevance.cause == "generation"
    _, context = first["context_relevance"]
    assert context["gen_ai.evaluation.score.value"].double_value == relevance.context_relevance
    assert context["gen_ai.evaluation.score.label"].string_value == "relevant"
    assert context["faithmon.cause"].string_value == "generation"
    assert "cause: generation" in context["gen_ai.evaluation.explanation"].string_value
    _, answer = first["answer_relevance"]
    assert answer["gen_ai.evaluation.score.value"].double_value == relevance.answer_relevance
    _, faithful_answer = by_trace[f"{2:032x}"]["context_relevance"]
    assert "faithmon.cause" not in faithful_answer

    sums, counts = {}, {}
    for body in collector.bodies["/v1/metrics"]:
        request = ExportMetricsServiceRequest.FromString(body)
        for resource in request.resource_metrics:
            for scope in resource.scope_metrics:
                for metric in scope.metrics:
                    if metric.HasField("sum"):
                        sums[metric.name] = sum(p.as_int for p in metric.sum.data_points)
                    if metric.HasField("histogram"):
                        counts[metric.name] = sum(p.count for p in metric.histogram.data_points)
    assert sums["faithmon.evaluations"] == 3
    assert sums["faithmon.records.unsupported"] == 1
    assert counts["faithmon.faithfulness"] == 3
    assert counts["faithmon.context_relevance"] == counts["faithmon.answer_relevance"] == 2
