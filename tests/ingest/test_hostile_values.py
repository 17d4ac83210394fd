"""Hostile values inside an accepted OTLP/JSON export, over the receiver's HTTP stack: JSON
nested a thousand deep in chunk metadata or packed documents, and lone surrogates. The
export is acknowledged, so each trace must be stored: never dropped, never a 500."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import pytest

from faithmon.api.app import create_app
from faithmon.cli import wiring
from faithmon.ingest.bounded_json import MAX_DEPTH
from faithmon.ingest.conventions.values import chunks
from faithmon.ingest.pipeline import Pipeline
from faithmon.ingest.sampler import KeepAll
from faithmon.ingest.scrub import PiiScrubber
from faithmon.model import RagRecord
from faithmon.store import engine as store_engine
from faithmon.store.stored_records import load_traces
from tests.ingest.factory import post
from tests.servers import serve_in_thread

JSON = "application/json"
NORMAL = "1" * 32
HOSTILE = "2" * 32
SURROGATE = "3" * 32
# Spans dated now: a start far from when it was received is itself repaired.
NOW_NS = time.time_ns()
# Deeper than json.loads and every recursive walk after it can go on a thread's stack.
DEEP = 1_000 + 500


@pytest.fixture
def records() -> list[RagRecord]:
    return []


@pytest.fixture
def pipeline(records: list[RagRecord]) -> Pipeline:
    """The real scrubber: it walks metadata, so deep nesting reaching it would raise there."""
    scrubber = PiiScrubber(b"hostile-values-key-0123")
    return Pipeline(records.extend, sampler=KeepAll(), scrubber=scrubber, quiet_seconds=0)


@pytest.fixture
def receiver(pipeline: Pipeline) -> Iterator[str]:
    with serve_in_thread(create_app(pipeline)) as url:
        yield url


def _deep_object(depth: int) -> str:
    return '{"a":' * depth + "1" + "}" * depth


def _value(value: Any) -> dict[str, Any]:
    if isinstance(value, int):
        return {"intValue": str(value)}
    return {"stringValue": value}


def _span(
    trace_id: str, span_id: str, parent: str, attributes: dict[str, Any], **extra: Any
) -> dict[str, Any]:
    return {
        "traceId": trace_id,
        "spanId": span_id,
        "parentSpanId": parent,
        "name": "span",
        "startTimeUnixNano": str(NOW_NS),
        "endTimeUnixNano": str(NOW_NS + 1000),
        "attributes": [{"key": k, "value": _value(v)} for k, v in attributes.items()],
        **extra,
    }


def _trace(trace_id: str, retriever: dict[str, Any], events: list[Any] | None = None) -> list[Any]:
    """A CHAIN root (question, answer) and a retrieval child carrying ``retriever``."""
    root = _span(
        trace_id,
        "a" * 16,
        "",
        {"openinference.span.kind": "CHAIN", "input.value": "Where?", "output.value": "Here."},
    )
    extra = {"events": events} if events else {}
    return [root, _span(trace_id, "b" * 16, "a" * 16, retriever, **extra)]


def _export(*traces: list[Any]) -> bytes:
    spans = [span for trace in traces for span in trace]
    document = {"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}
    return json.dumps(document).encode("utf-8", "surrogatepass")


def _normal() -> list[Any]:
    return _trace(
        NORMAL,
        {
            "openinference.span.kind": "RETRIEVER",
            "retrieval.documents.0.document.content": "It is here.",
            "retrieval.documents.0.document.metadata": '{"source": "faq"}',
        },
    )


def _stored(pipeline: Pipeline, records: list[RagRecord]) -> dict[str, RagRecord]:
    pipeline.flush_all()
    return {record.trace_id: record for record in records}


DEEP_CASES = {
    "openinference-metadata": (
        {
            "openinference.span.kind": "RETRIEVER",
            "retrieval.documents.0.document.content": "It is here.",
            "retrieval.documents.0.document.metadata": _deep_object(DEEP),
        },
        None,
        f"chunk 0 metadata JSON nested deeper than {MAX_DEPTH} levels",
    ),
    "packed-documents": (
        {
            "openinference.span.kind": "RETRIEVER",
            "gen_ai.retrieval.documents": json.dumps([{"content": "It is here."}])[:-1]
            + ", "
            + _deep_object(DEEP)
            + "]",
        },
        None,
        f"chunk JSON nested deeper than {MAX_DEPTH} levels",
    ),
    "genai-documents": (
        {
            "gen_ai.operation.name": "retrieval",
            "gen_ai.retrieval.documents": "[" * DEEP + "]" * DEEP,
        },
        None,
        f"chunk JSON nested deeper than {MAX_DEPTH} levels",
    ),
    "openllmetry-event-metadata": (
        {"traceloop.span.kind": "task"},
        [
            {
                "name": "db.query.result",
                "timeUnixNano": str(NOW_NS + 500),
                "attributes": [
                    {"key": "db.query.result.document", "value": _value("It is here.")},
                    {"key": "db.query.result.metadata", "value": _value(_deep_object(DEEP))},
                ],
            }
        ],
        f"chunk 0 metadata JSON nested deeper than {MAX_DEPTH} levels",
    ),
}


@pytest.mark.parametrize("case", list(DEEP_CASES))
def test_deep_json_in_evidence_is_stored_as_incomplete_evidence(
    receiver: str, pipeline: Pipeline, records: list[RagRecord], case: str
) -> None:
    """A chunk's metadata or a packed documents attribute nested past the limit makes the
    record incomplete evidence, with the reason; the other trace of the export is whole."""
    retriever, events, reason = DEEP_CASES[case]
    body = _export(_normal(), _trace(HOSTILE, retriever, events))
    status, _, _ = post(receiver, body, {"Content-Type": JSON})
    assert status == 200
    stored = _stored(pipeline, records)
    assert set(stored) == {NORMAL, HOSTILE}
    hostile = stored[HOSTILE]
    assert hostile.incomplete == reason
    assert (hostile.question, hostile.answer) == ("Where?", "Here.")
    normal = stored[NORMAL]
    assert normal.incomplete is None and normal.repairs == ()
    assert [(c.text, dict(c.metadata)) for c in normal.chunks] == [
        ("It is here.", {"source": "faq"})
    ]


def test_metadata_nested_within_the_limit_is_kept() -> None:
    """Nesting up to the limit is ordinary data: parsed and kept, not refused."""
    nested = _deep_object(MAX_DEPTH - 1)
    (chunk,), problem = chunks([{"content": "x", "metadata": nested}])
    assert problem is None and chunk.metadata == json.loads(nested)


def test_a_lone_surrogate_is_repaired_and_the_export_accepted(
    receiver: str, pipeline: Pipeline, records: list[RagRecord]
) -> None:
    """Lone surrogates in a value, an attribute key and an unknown key become U+FFFD, the
    record says so in its repairs, and the other trace of the export is untouched."""
    hostile = _trace(
        HOSTILE,
        {
            "openinference.span.kind": "RETRIEVER",
            "retrieval.documents.0.document.content": "It is \udc00here.",
            "odd \ud800 key": "value",
        },
    )
    hostile[0]["attributes"][1]["value"]["stringValue"] = "Where\ud800?"
    hostile[0]["\udfff unknown"] = {"\ud800": "\udc00"}
    status, reply, _ = post(receiver, _export(_normal(), hostile), {"Content-Type": JSON})
    assert status == 200, reply
    stored = _stored(pipeline, records)
    assert set(stored) == {NORMAL, HOSTILE}
    record = stored[HOSTILE]
    assert record.question == "Where\ufffd?"
    assert [c.text for c in record.chunks] == ["It is \ufffdhere."]
    note = "OTLP/JSON: lone surrogates replaced by U+FFFD in 2 spans and log records"
    assert record.repairs == (note,)
    assert stored[NORMAL].repairs == ()
    assert stored[NORMAL].question == "Where?"


def test_hostile_traces_reach_the_store_with_their_status(database_url: str) -> None:
    """Through the real store: the deep trace is incomplete_evidence with its reason, the
    repaired one pending with its repair listed, the normal one pending and untouched."""
    engine = store_engine.make_engine(database_url)
    try:
        store_engine.upgrade(engine)
        sessions = store_engine.session_factory(engine)
        scrubber = PiiScrubber(b"hostile-values-key-0123")
        pipeline = Pipeline(
            wiring.make_save(sessions), sampler=KeepAll(), scrubber=scrubber, quiet_seconds=0
        )
        deep, _, reason = DEEP_CASES["packed-documents"]
        repaired = _trace(SURROGATE, {"openinference.span.kind": "RETRIEVER"})
        repaired[0]["attributes"][1]["value"]["stringValue"] = "Where\ud800?"
        body = _export(_normal(), _trace(HOSTILE, deep), repaired)
        with serve_in_thread(create_app(pipeline)) as url:
            assert post(url, body, {"Content-Type": JSON})[0] == 200
            pipeline.flush_all()
        with sessions() as session:
            stored = load_traces(session, [NORMAL, HOSTILE, SURROGATE])
    finally:
        engine.dispose()
    assert stored[HOSTILE].status == "incomplete_evidence"
    assert stored[HOSTILE].record.incomplete == reason
    assert stored[SURROGATE].record.question == "Where\ufffd?"
    assert stored[SURROGATE].record.repairs == (
        "OTLP/JSON: lone surrogates replaced by U+FFFD in 1 span or log record",
    )
    assert stored[NORMAL].status == "pending"
    assert stored[NORMAL].record.repairs == () and stored[NORMAL].record.incomplete is None
