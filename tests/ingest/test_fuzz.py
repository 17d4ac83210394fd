"""Property: no OTLP/HTTP request, however hostile, gets a 5xx or stops the receiver.

bench/fuzz.py runs the same cases (tests/ingest/otlp_cases.py) 10,000+ times
against a ``faithmon serve``-like process and reports peak memory.
"""

from __future__ import annotations

import http.client
import logging
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, given, settings

from faithmon.api.app import create_app
from faithmon.ingest.pipeline import Pipeline
from faithmon.ingest.sampler import KeepAll
from faithmon.ingest.scrub import identity
from faithmon.model import RagRecord
from tests.ingest.factory import rag_body
from tests.ingest.otlp_cases import EXPECTED, MAX_BODY_BYTES, Case, cases
from tests.servers import serve_in_thread


class ErrorLog(logging.Handler):
    """Collects faithmon's ERROR lines: an unexpected decoding failure logs one."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


class Receiver:
    """A receiver on a real socket, with the list its pipeline saves records into and its
    error log."""

    def __init__(
        self, url: str, pipeline: Pipeline, records: list[RagRecord], errors: ErrorLog
    ) -> None:
        host, port = url.removeprefix("http://").split(":")
        self.host, self.port = host, int(port)
        self.pipeline = pipeline
        self.records = records
        self.errors = errors

    def request(self, method: str, path: str, body: bytes = b"", **headers: str) -> int:
        connection = http.client.HTTPConnection(self.host, self.port, timeout=30)
        try:
            connection.request(method, path, body=body, headers=headers)
            response = connection.getresponse()
            response.read()
            return response.status
        finally:
            connection.close()


@pytest.fixture(scope="module")
def receiver() -> Iterator[Receiver]:
    """One receiver for every example (1 MB body limit), saving records to a list."""
    records: list[RagRecord] = []
    pipeline = Pipeline(records.extend, sampler=KeepAll(), scrubber=identity, quiet_seconds=0)
    errors = ErrorLog()
    logger = logging.getLogger("faithmon")
    logger.addHandler(errors)
    try:
        with serve_in_thread(create_app(pipeline, max_body_bytes=MAX_BODY_BYTES)) as url:
            yield Receiver(url, pipeline, records, errors)
    finally:
        logger.removeHandler(errors)


@settings(
    max_examples=300,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(case=cases())
def test_every_answer_is_expected_and_the_receiver_keeps_serving(
    receiver: Receiver, case: Case
) -> None:
    """Each hostile request gets 200, 400, 408, 413 or 415; /healthz answers 200 after it."""
    status = receiver.request("POST", "/v1/traces", case.body, **case.headers)
    # An in-memory store never fails, so a 503 would mean the pipeline filled up: a bug.
    assert status in EXPECTED, (case.label, status)
    receiver.pipeline.flush_all()
    assert receiver.errors.messages == []
    assert receiver.request("GET", "/healthz") == 200


def test_the_receiver_still_serves_after_the_fuzz(receiver: Receiver) -> None:
    """After every example, a plain export still lands (runs after the property above)."""
    status = receiver.request(
        "POST", "/v1/traces", rag_body("after fuzz"), **{"Content-Type": "application/x-protobuf"}
    )
    assert status == 200
    receiver.pipeline.flush_all()
    assert "after fuzz" in [r.question for r in receiver.records]
    assert receiver.errors.messages == []
