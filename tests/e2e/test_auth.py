"""API keys on a real `faithmon serve`: scopes over HTTP and gRPC, tenants stamped at the
door, revocation, and no open door beyond loopback."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import grpc
import pytest
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2_grpc
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

import faithmon_instrumentation as fm
from tests.api.client import send
from tests.e2e.helpers import faithmon, free_port
from tests.ingest.factory import PROTOBUF, rag_body
from tests.timing import wait_for

# The dialect is not the point here: PostgreSQL runs in the second_backend tier.
pytestmark = pytest.mark.one_backend

Keys = dict[str, dict[str, object]]


@pytest.fixture
def keys(env: dict[str, str]) -> Keys:
    """Keys made before the server starts, so it never runs open."""
    faithmon(env, "db", "upgrade")

    def create(*args: str) -> dict[str, object]:
        made: dict[str, object] = json.loads(faithmon(env, "keys", "create", *args, "--json"))
        return made

    return {
        "admin": create("--scopes", "admin", "--name", "operator"),
        "acme": create("--scopes", "ingest", "--tenant", "acme"),
        "globex": create("--scopes", "ingest", "--tenant", "globex"),
        "reader": create("--scopes", "read"),
        "unbound": create("--scopes", "ingest"),
    }


def _call(url: str, path: str, key: object = None, body: bytes | None = None) -> tuple[int, str]:
    headers = {"Content-Type": PROTOBUF} if body is not None else {}
    if key is not None:
        headers["Authorization"] = f"Bearer {key}"
    status, answer, _ = send(url + path, body, headers, timeout=10)
    return status, answer.decode(errors="replace")


def _records(env: dict[str, str]) -> list[dict[str, object]]:
    found: list[dict[str, object]] = json.loads(
        faithmon(env, "traces", "list", "--json", "--limit", "1000")
    )
    return found


def test_scopes_and_tenants_over_http(
    env: dict[str, str], keys: Keys, server: tuple[str, subprocess.Popen[str]]
) -> None:
    url, _ = server
    assert _call(url, "/healthz")[0] == 200
    body = rag_body()
    status, text = _call(url, "/v1/traces", body=body)
    assert status == 401 and "an API key is needed" in text
    assert _call(url, "/v1/traces", "fm_00000000_forged", body)[0] == 401
    status, text = _call(url, "/v1/traces", keys["reader"]["key"], body)
    assert status == 403 and "ingest scope" in text
    assert _call(url, "/metrics")[0] == 401
    assert _call(url, "/metrics", keys["acme"]["key"])[0] == 403
    assert _call(url, "/metrics", keys["reader"]["key"])[0] == 200
    assert _call(url, "/openapi.json", keys["admin"]["key"])[0] == 200
    assert _call(url, "/v1/traces", keys["unbound"]["key"], body)[0] == 200

    # The shim sends with its key; the app's own tenant label cannot beat the key's.
    fm.setup(endpoint=url, service_name="auth-app", api_key=str(keys["acme"]["key"]))
    try:
        with fm.rag_span("Where is order A17?", tenant="globex") as rag:
            rag.record_retrieval(["Order A17 shipped."])
            rag.record_answer("Order A17 shipped.")
        assert fm.flush()
    finally:
        fm.shutdown()

    records: list[dict[str, object]] = []

    def stored() -> bool:
        records[:] = _records(env)
        return len(records) == 2

    wait_for(stored, 60, "both records stored")
    tenants = sorted(str(r["labels"].get("tenant")) for r in records)  # type: ignore[attr-defined]
    assert tenants == ["None", "acme"]
    assert all(str(keys["acme"]["key"]) not in json.dumps(r) for r in records)


def _json_spans(trace_id: str, answer: str, root: bool, start_ns: int) -> bytes:
    """An OTLP/JSON export of one trace: a root chain span with a question, an answer
    and a retrieval child (``root``), or one LLM span under that root with an answer."""

    def attrs(**values: str) -> list[dict[str, object]]:
        return [
            {"key": k.replace("_", "."), "value": {"stringValue": v}} for k, v in values.items()
        ]

    def span(span_id: str, parent: str, name: str, **values: str) -> dict[str, object]:
        return {
            "traceId": trace_id,
            "spanId": span_id,
            "parentSpanId": parent,
            "name": name,
            "startTimeUnixNano": str(start_ns),
            "endTimeUnixNano": str(start_ns + 1_000_000),
            "attributes": attrs(**values),
        }

    kind = "openinference_span_kind"
    if root:
        found = [
            span("a1" * 8, "", "rag.request", **{kind: "CHAIN", "input_value": "Where is A17?",
                 "output_value": answer}),
            span("b2" * 8, "a1" * 8, "retrieve", **{kind: "RETRIEVER",
                 "retrieval_documents_0_document_content": "Order A17 shipped."}),
        ]  # fmt: skip
    else:
        found = [span("c3" * 8, "a1" * 8, "llm", **{kind: "LLM", "output_value": answer})]
    return json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": found}]}]}).encode()


def test_another_tenants_span_cannot_move_or_rewrite_a_trace(
    env: dict[str, str], keys: Keys, server: tuple[str, subprocess.Popen[str]]
) -> None:
    """A tenant-bound key sending spans with another tenant's trace id, at once (while
    the trace assembles) or late (after it is stored), neither re-stamps the record to
    its tenant, nor replaces its answer, nor backdates it: never one record of both."""
    url, _ = server
    now = time.time_ns()
    trace = "5e" * 16

    def export(key: str, body: bytes) -> int:
        headers = {"Content-Type": "application/json", "Authorization": f"Bearer {key}"}
        return send(url + "/v1/traces", body, headers, timeout=10)[0]

    acme, globex = str(keys["acme"]["key"]), str(keys["globex"]["key"])
    assert export(acme, _json_spans(trace, "It shipped.", True, now)) == 200
    old = now - 40 * 86_400 * 10**9  # forty days back: retention would delete it
    assert export(globex, _json_spans(trace, "It was cancelled.", False, old)) == 200
    records: list[dict[str, object]] = []

    def stored() -> bool:
        records[:] = [r for r in _records(env) if r["trace_id"] == trace]
        return len(records) == 1

    wait_for(stored, 60, "the trace stored")
    assert export(globex, _json_spans(trace, "It was lost.", True, old)) == 200
    # A trace sent after the late spans is stored after them: then they are settled.
    after = "7f" * 16
    assert export(acme, _json_spans(after, "It shipped.", True, now)) == 200
    wait_for(lambda: any(r["trace_id"] == after for r in _records(env)), 60, "a later trace")
    (record,) = [r for r in _records(env) if r["trace_id"] == trace]
    assert record["labels"]["tenant"] == "acme"  # type: ignore[index]
    assert record["answer"] == "It shipped."
    assert str(record["started_at"]) == str(records[0]["started_at"])


def test_grpc_asks_for_an_ingest_key_and_stamps_its_tenant(
    env: dict[str, str], keys: Keys, server: tuple[str, subprocess.Popen[str]], grpc_port: int
) -> None:
    request = ExportTraceServiceRequest.FromString(rag_body())
    reader = keys["reader"]["key"]
    with grpc.insecure_channel(f"127.0.0.1:{grpc_port}") as channel:
        stub = trace_service_pb2_grpc.TraceServiceStub(channel)  # type: ignore[no-untyped-call]
        for metadata, code in (
            ((), grpc.StatusCode.UNAUTHENTICATED),
            ((("authorization", "Bearer fm_00000000_forged"),), grpc.StatusCode.UNAUTHENTICATED),
            ((("authorization", f"Bearer {reader}"),), grpc.StatusCode.PERMISSION_DENIED),
        ):
            with pytest.raises(grpc.RpcError) as refused:
                stub.Export(request, metadata=metadata, timeout=10)
            assert refused.value.code() == code
        stub.Export(
            request, metadata=(("authorization", f"Bearer {keys['acme']['key']}"),), timeout=10
        )
    records: list[dict[str, object]] = []

    def stored() -> bool:
        records[:] = _records(env)
        return bool(records)

    wait_for(stored, 60, "the gRPC record stored")
    assert [r["labels"].get("tenant") for r in records] == ["acme"]  # type: ignore[attr-defined]


def test_a_revoked_key_is_refused_by_the_running_server(
    env: dict[str, str], keys: Keys, server: tuple[str, subprocess.Popen[str]]
) -> None:
    url, _ = server
    key = keys["reader"]["key"]
    assert _call(url, "/metrics", key)[0] == 200
    assert "revoked key" in faithmon(env, "keys", "revoke", str(keys["reader"]["id"]))
    listed = json.loads(faithmon(env, "keys", "list", "--json"))
    # Newest first, like every list.
    assert [k["id"] for k in listed] == sorted((k["id"] for k in listed), reverse=True)
    revoked = {k["id"] for k in listed if k["revoked_at"] is not None}
    assert revoked == {keys["reader"]["id"]} and len(listed) == len(keys)
    assert all("key" not in k for k in listed)
    wait_for(lambda: _call(url, "/metrics", key)[0] == 401, 30, "the revoked key refused")


def test_serve_refuses_an_open_door_beyond_loopback(env: dict[str, str], tmp_path: Path) -> None:
    faithmon(env, "db", "upgrade")
    command = [sys.executable, "-m", "faithmon", "serve", "--host", "0.0.0.0"]
    command += ["--port", str(free_port()), "--grpc-port", "0"]
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode != 0
    assert "no API key exists" in done.stderr and "FAITHMON_AUTH=off" in done.stderr
    assert "Traceback" not in done.stderr
