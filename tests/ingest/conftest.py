"""Fixtures for ingest tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import faithmon_instrumentation as fm


@pytest.fixture
def span_exporter() -> Iterator[InMemorySpanExporter]:
    """An in-memory exporter fed by the shim, set up without OTLP export."""
    exporter = InMemorySpanExporter()
    fm.setup(service_name="support-bot", processors=[SimpleSpanProcessor(exporter)], export=False)
    yield exporter
    fm.shutdown()
