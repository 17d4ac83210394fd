"""Export for the shim's provider: the OTLP/HTTP exporter, retried through outages.

Part of setting up the provider (with ``_setup.py``, the only modules that touch the SDK).
Export rides out a collector outage of a minute or so: the batch queue holds
``MAX_QUEUE_SIZE`` spans, and a batch the OTLP exporter failed to send (its own
retry loop stops after six attempts) is retried with backoff until
``RETRY_WINDOW_SECONDS`` after the first failure since the last success. A
refusal the OTLP spec forbids retrying (400, 404, 413, ...) is not retried. What
is dropped anyway is counted and said in one warning line at most once a minute.
The ``OTEL_BSP_*`` and ``OTEL_EXPORTER_OTLP_[TRACES_]TIMEOUT`` variables, when
set, replace these defaults (the timeout then is the retry window, in seconds
as the Python exporter reads it).
"""

from __future__ import annotations

import logging
import math
import os
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any
from urllib.parse import urlsplit

import requests
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.environment_variables import (
    OTEL_BSP_MAX_EXPORT_BATCH_SIZE,
    OTEL_BSP_MAX_QUEUE_SIZE,
    OTEL_EXPORTER_OTLP_ENDPOINT,
    OTEL_EXPORTER_OTLP_TIMEOUT,
    OTEL_EXPORTER_OTLP_TRACES_ENDPOINT,
    OTEL_EXPORTER_OTLP_TRACES_TIMEOUT,
)
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult

from ._log import DropReport, log_once

logger = logging.getLogger(__name__)
TRACES_PATH = "/v1/traces"
# Export settings; the OTEL_* variables above win when set.
MAX_QUEUE_SIZE = 65_536
"""Spans queued for export: a minute at 1,000 spans/s. Bounded, because spans that
carry chunk text are large: lower OTEL_BSP_MAX_QUEUE_SIZE to hold less memory."""
MAX_EXPORT_BATCH_SIZE = 512
RETRY_WINDOW_SECONDS = 90.0
"""How long after the first failure a batch is retried before it is dropped."""
ATTEMPT_TIMEOUT_SECONDS = 30.0
"""The OTLP exporter's own timeout: one request and its six quick retries."""
BACKOFF_SECONDS = (1.0, 10.0)
"""First and longest wait between the shim's retries of a batch (tests shorten it)."""
DROP_WARNING_INTERVAL_SECONDS = 60.0
RETRYABLE_STATUS = frozenset({429, 502, 503, 504})
"""The OTLP/HTTP spec's retryable codes; every other error response is final."""
_CREDENTIAL_PROVIDER_VARIABLES = (
    "OTEL_PYTHON_EXPORTER_OTLP_HTTP_CREDENTIAL_PROVIDER",
    "OTEL_PYTHON_EXPORTER_OTLP_HTTP_TRACES_CREDENTIAL_PROVIDER",
)


API_KEY_VARIABLE = "FAITHMON_API_KEY"


def traces_url(endpoint: str) -> str:
    """Accept a base URL (``http://host:4318``) or a full ``.../v1/traces`` URL."""
    endpoint = endpoint.rstrip("/")
    return endpoint if endpoint.endswith(TRACES_PATH) else endpoint + TRACES_PATH


def _positive_number(name: str, default: float) -> float:
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if math.isfinite(value) and value > 0:
        return value
    logger.warning(
        "faithmon_instrumentation: %s=%r is not a positive number; using %g", name, raw, default
    )
    return default


def _target(endpoint: str | None) -> str:
    """The collector, for log lines: the traces URL as the exporter resolves it, less
    any user name, password or query."""
    url = (
        traces_url(endpoint)
        if endpoint
        else os.environ.get(OTEL_EXPORTER_OTLP_TRACES_ENDPOINT)
        or traces_url(os.environ.get(OTEL_EXPORTER_OTLP_ENDPOINT) or "http://localhost:4318")
    )
    try:
        parts = urlsplit(url.strip())
        port = f":{parts.port}" if parts.port else ""
        return f"the collector at {parts.scheme}://{parts.hostname}{port}{parts.path}"
    except ValueError:
        return "the collector"


def export_processor(endpoint: str | None, api_key: str | None = None) -> _ExportProcessor:
    """Batching OTLP/HTTP export that retries through an outage and counts what it drops.

    Without an endpoint the exporter reads the OTEL_EXPORTER_OTLP_* variables. The
    faithmon API key (``api_key``, else ``FAITHMON_API_KEY``) goes in an
    ``Authorization: Bearer`` header; without one, OTEL_EXPORTER_OTLP_HEADERS applies.
    """
    key = (api_key or os.environ.get(API_KEY_VARIABLE, "")).strip()
    headers = {"Authorization": f"Bearer {key}"} if key else None
    window = _positive_number(
        OTEL_EXPORTER_OTLP_TRACES_TIMEOUT,
        _positive_number(OTEL_EXPORTER_OTLP_TIMEOUT, RETRY_WINDOW_SECONDS),
    )
    queue_size = max(int(_positive_number(OTEL_BSP_MAX_QUEUE_SIZE, MAX_QUEUE_SIZE)), 1)
    batch_size = max(
        int(_positive_number(OTEL_BSP_MAX_EXPORT_BATCH_SIZE, MAX_EXPORT_BATCH_SIZE)), 1
    )
    # A session of the shim's own shows how each request went; a credential
    # provider's session is left to the exporter, which then retries any failure.
    session = None
    if not any(os.environ.get(name) for name in _CREDENTIAL_PROVIDER_VARIABLES):
        session = _ObservedSession()
    otlp = OTLPSpanExporter(
        endpoint=traces_url(endpoint) if endpoint else None,
        timeout=min(window, ATTEMPT_TIMEOUT_SECONDS),
        session=session,
        headers=headers,
    )
    return _ExportProcessor(
        otlp,
        session,
        target=_target(endpoint),
        window=window,
        max_queue_size=queue_size,
        max_export_batch_size=min(batch_size, queue_size),
    )


class _ObservedSession(requests.Session):
    """Remembers how the last request went, to tell a refusal from an outage."""

    def __init__(self) -> None:
        super().__init__()
        self.sent = 0
        self.status: int | None = None
        self.error: str | None = None
        self.retry_after: float | None = None

    def send(self, request: requests.PreparedRequest, **kwargs: Any) -> requests.Response:
        self.sent += 1
        try:
            response = super().send(request, **kwargs)
        except Exception as exc:
            self.status, self.error, self.retry_after = None, type(exc).__name__, None
            raise
        self.status, self.error = response.status_code, None
        try:  # seconds; an HTTP date is left to the exporter's own retries
            seconds = float(response.headers.get("Retry-After", ""))
        except ValueError:
            seconds = math.nan
        self.retry_after = max(seconds, 0.0) if math.isfinite(seconds) else None
        return response

    @property
    def failing(self) -> bool:
        """The last request got no answer, or an error answer."""
        return self.sent > 0 and (self.status is None or self.status >= 400)


class _RetryingExporter(SpanExporter):
    """Retries a batch the OTLP exporter failed to send, until a deadline.

    The deadline is ``window`` seconds after the first failure since the last
    success, so during a long outage each new batch gets one more try, not a
    window of its own. Runs on the batch processor's thread, never raises, and
    stops retrying as soon as shutdown begins.
    """

    def __init__(
        self,
        exporter: SpanExporter,
        session: _ObservedSession | None,
        *,
        target: str,
        window: float,
        drops: DropReport,
        taken: Callable[[int], None],
    ) -> None:
        self._exporter = exporter
        self._session = session
        self._target = target
        self._window = window
        self._drops = drops
        self._taken = taken
        self._stopping = threading.Event()
        self._failing_since: float | None = None
        self._closed = False
        self._close_lock = threading.Lock()

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        try:
            self._taken(len(spans))
            self._drops.report()
            return self._export(spans)
        except Exception:
            log_once("export", "span export failed")
            self._drops.add(len(spans), "the exporter failed")
            return SpanExportResult.FAILURE

    def _export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        backoff, longest = BACKOFF_SECONDS
        last = "no answer"
        while True:
            if self._stopping.is_set() and self._failing_since is not None:
                return self._drop(spans, f"shutdown came while {self._target} was unavailable")
            session = self._session
            sent = session.sent if session is not None else 0
            if self._exporter.export(spans) is SpanExportResult.SUCCESS:
                self._failing_since = None
                return SpanExportResult.SUCCESS
            now = time.monotonic()
            retry_after: float | None = None
            if session is not None:
                if session.sent == sent:
                    return self._drop(spans, "the exporter could not send them")
                if session.status is not None and session.status not in RETRYABLE_STATUS:
                    self._failing_since = None  # it answered: it is up
                    return self._drop(spans, f"{self._target} refused them (HTTP {session.status})")
                last = f"HTTP {session.status}" if session.status else session.error or last
                retry_after = session.retry_after
            if self._failing_since is None:
                self._failing_since = now
            remaining = self._failing_since + self._window - now
            if self._stopping.is_set():
                return self._drop(
                    spans, f"shutdown came while {self._target} was unavailable ({last})"
                )
            if remaining <= 0:
                return self._drop(
                    spans, f"{self._target} was unavailable for {self._window:g} s ({last})"
                )
            # The longer of the server's Retry-After and the backoff: never a busy loop.
            self._stopping.wait(min(max(retry_after or 0.0, backoff), remaining))
            backoff = min(backoff * 2, longest)

    def _drop(self, spans: Sequence[ReadableSpan], reason: str) -> SpanExportResult:
        self._drops.add(len(spans), reason)
        return SpanExportResult.FAILURE

    def stop(self) -> None:
        """Retry no more; if the collector is away, give up on the batch in hand now."""
        self._stopping.set()
        if self._failing_since is not None or (self._session is not None and self._session.failing):
            self._close()

    def _close(self) -> None:
        with self._close_lock:
            if self._closed:
                return
            self._closed = True
        try:
            self._exporter.shutdown()  # also cuts short the exporter's own backoff
        except Exception:
            log_once("exporter-shutdown", "could not shut the exporter down")

    def shutdown(self) -> None:
        self._stopping.set()
        self._close()

    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        return True


class _ExportProcessor(BatchSpanProcessor):
    """BatchSpanProcessor that counts the spans it drops and never holds the app's thread.

    The queue's fill is shadowed by a counter (spans in, minus spans handed to the
    exporter): the SDK drops the oldest span when its queue is full and counts it
    nowhere an app can read. ``force_flush`` exports on a helper thread and waits
    at most its timeout, since a retried batch may take the whole retry window.
    """

    def __init__(
        self,
        exporter: SpanExporter,
        session: _ObservedSession | None,
        *,
        target: str,
        window: float,
        max_queue_size: int,
        max_export_batch_size: int,
    ) -> None:
        self._drops = DropReport(DROP_WARNING_INTERVAL_SECONDS)
        self._queue_limit = max_queue_size
        self._queued = 0
        self._count_lock = threading.Lock()
        self._pid = os.getpid()
        self._flush_lock = threading.Lock()
        self._flusher: tuple[threading.Thread | None, list[bool]] = (None, [])
        self._retrying = _RetryingExporter(
            exporter, session, target=target, window=window, drops=self._drops, taken=self._taken
        )
        super().__init__(
            self._retrying,
            max_queue_size=max_queue_size,
            max_export_batch_size=max_export_batch_size,
        )

    @property
    def max_queue_size(self) -> int:
        return self._queue_limit

    def on_end(self, span: ReadableSpan) -> None:
        if span.context is not None and span.context.trace_flags.sampled:
            with self._count_lock:
                if self._pid != os.getpid():  # a forked child starts with an empty queue
                    self._pid, self._queued = os.getpid(), 0
                full = self._queued >= self._queue_limit
                if not full:
                    self._queued += 1
            if full:
                self._drops.add(1, f"the export queue of {self._queue_limit} spans was full")
        super().on_end(span)

    def _taken(self, count: int) -> None:
        with self._count_lock:
            self._queued = max(self._queued - count, 0)

    def force_flush(self, timeout_millis: int | None = None) -> bool:
        """Export what is queued; True if it all went out within the timeout."""
        timeout = 30.0 if timeout_millis is None else max(timeout_millis, 0) / 1000
        before = self._drops.total
        with self._flush_lock:
            # One helper at a time: an app that flushes per request during an
            # outage joins the flush under way instead of piling up threads.
            helper, outcome = self._flusher
            if helper is None or not helper.is_alive():
                outcome = []
                helper = threading.Thread(
                    target=self._flush_into, args=(outcome,), name="faithmon-flush", daemon=True
                )
                self._flusher = helper, outcome
                helper.start()
        helper.join(timeout)
        self._drops.report()
        return not helper.is_alive() and outcome == [True] and self._drops.total == before

    def _flush_into(self, outcome: list[bool]) -> None:
        try:
            outcome.append(super().force_flush())
        except Exception:
            log_once("flush", "flush failed")

    def shutdown(self) -> None:
        self._retrying.stop()
        stop_batching: Callable[[], None] = super().shutdown  # untyped in the SDK
        stop_batching()
        with self._count_lock:
            left, self._queued = self._queued, 0
        self._drops.add(left, "they were still queued at shutdown")
        self._drops.report(force=True)
