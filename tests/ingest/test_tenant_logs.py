"""Tenants stamped on OTLP logs as on spans, over the receiver's HTTP stack with real keys
and a real store: a trace that arrives only as log events (older GenAI instrumentations)
belongs to the tenant of the key that sent it, and another tenant cannot read it."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue, KeyValueList

from faithmon.api.app import create_app
from faithmon.api.keys import key_hash, new_key
from faithmon.cli import wiring
from faithmon.config import Settings
from faithmon.ingest.pipeline import Pipeline
from faithmon.ingest.sampler import KeepAll
from faithmon.ingest.scrub import identity
from faithmon.store import engine as store_engine
from faithmon.store import keys as store_keys
from tests.api.client import send
from tests.ingest.factory import PROTOBUF, rag_body
from tests.servers import serve_in_thread

QUESTION = "Where is order A17?"
ANSWER = "It shipped on Monday."


@dataclass
class Served:
    url: str
    pipeline: Pipeline
    keys: dict[str, str]


@pytest.fixture
def served(database_url: str) -> Iterator[Served]:
    """A receiver saving to a migrated database, behind two tenants' ingest+read keys."""
    engine = store_engine.make_engine(database_url)
    try:
        store_engine.upgrade(engine)
        sessions = store_engine.session_factory(engine)
        keys: dict[str, str] = {}
        with sessions.begin() as session:
            for tenant in ("acme", "globex"):
                key, prefix = new_key()
                store_keys.create_key(session, prefix, key_hash(key), ["ingest", "read"], tenant)
                keys[tenant] = key
        settings = Settings.from_env(
            {"FAITHMON_DATABASE_URL": database_url, "FAITHMON_SCRUB_KEY": "tenant-logs-0123456"}
        )
        auth = wiring.make_auth(settings, sessions, "127.0.0.1")
        pipeline = Pipeline(
            wiring.make_save(sessions), sampler=KeepAll(), scrubber=identity, quiet_seconds=0
        )
        with serve_in_thread(create_app(pipeline, sessions=sessions, auth=auth)) as url:
            yield Served(url, pipeline, keys)
    finally:
        engine.dispose()


def _any(value: Any) -> AnyValue:
    if isinstance(value, dict):
        pairs = [KeyValue(key=k, value=_any(v)) for k, v in value.items()]
        return AnyValue(kvlist_value=KeyValueList(values=pairs))
    return AnyValue(string_value=str(value))


def _log_events(trace_id: str) -> bytes:
    """The question and the answer of ``trace_id`` as GenAI log events, and no span."""
    request = ExportLogsServiceRequest()
    scope = request.resource_logs.add().scope_logs.add()
    for event, body in [
        ("gen_ai.user.message", {"content": QUESTION}),
        ("gen_ai.choice", {"index": "0", "message": {"content": ANSWER}}),
    ]:
        record = scope.log_records.add(trace_id=bytes.fromhex(trace_id), event_name=event)
        record.time_unix_nano = time.time_ns()
        record.body.CopyFrom(_any(body))
    return request.SerializeToString()


def _post(served: Served, path: str, tenant: str, body: bytes) -> int:
    headers = {"Content-Type": PROTOBUF, "Authorization": f"Bearer {served.keys[tenant]}"}
    status, _, _ = send(served.url + path, body, headers, timeout=10)
    return status


def _read(served: Served, trace_id: str, tenant: str) -> tuple[int, Any]:
    headers = {"Authorization": f"Bearer {served.keys[tenant]}"}
    status, body, _ = send(f"{served.url}/api/v1/traces/{trace_id}", None, headers, timeout=10)
    return status, json.loads(body) if status == 200 else None


def test_a_logs_only_trace_lands_in_the_senders_tenant(served: Served) -> None:
    """Sent on /v1/logs alone by acme's key, the record is acme's: globex's key gets 404."""
    trace_id = "5a" * 16
    assert _post(served, "/v1/logs", "acme", _log_events(trace_id)) == 200
    served.pipeline.flush_all()
    status, record = _read(served, trace_id, "acme")
    assert status == 200
    assert (record["question"], record["answer"]) == (QUESTION, ANSWER)
    assert record["labels"]["tenant"] == "acme"
    assert _read(served, trace_id, "globex")[0] == 404


def test_a_tenants_spans_and_log_events_make_one_record(served: Served) -> None:
    """Spans on /v1/traces and log events of the same trace, both from acme's key, join
    into one record of acme's, as they do without keys."""
    spans = rag_body("")  # a retrieval and a root without a question: the log gives it
    exported = ExportTraceServiceRequest.FromString(spans)
    hex_id = exported.resource_spans[0].scope_spans[0].spans[0].trace_id.hex()
    assert _post(served, "/v1/logs", "acme", _log_events(hex_id)) == 200
    assert _post(served, "/v1/traces", "acme", spans) == 200
    served.pipeline.flush_all()
    status, record = _read(served, hex_id, "acme")
    assert status == 200
    assert record["question"] == QUESTION
    assert [c["text"] for c in record["chunks"]] == ["Order A17 shipped."]
    assert record["labels"]["tenant"] == "acme"
    assert _read(served, hex_id, "globex")[0] == 404
