"""The shim's own TracerProvider: OTLP/HTTP export plus optional extra processors.

faithmon keeps its own provider rather than replacing the app's global one: an
app's provider may carry attribute limits that would cut chunk text, and
replacing a provider an app already configured would silently reroute its spans.
Parent/child links still cross providers, because they ride on the context.

Export (queue, retry window, dropped-span warnings) lives in ``_export.py``.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence

from opentelemetry import trace
from opentelemetry.sdk.resources import SERVICE_NAME, Resource
from opentelemetry.sdk.trace import SpanLimits, SpanProcessor, TracerProvider

from ._export import export_processor

logger = logging.getLogger(__name__)

# Room for 1,000 chunks at four keys each; chunk text is never truncated.
MAX_SPAN_ATTRIBUTES = 4096

_lock = threading.Lock()
_provider: TracerProvider | None = None
_owned = False


def configure(
    endpoint: str | None,
    service_name: str | None,
    processors: Sequence[SpanProcessor],
    export: bool,
    tracer_provider: TracerProvider | None = None,
    api_key: str | None = None,
) -> TracerProvider | None:
    global _provider, _owned
    with _lock:
        if _provider is not None:
            logger.warning("faithmon_instrumentation.setup() was already called; ignoring")
            return _provider
        if tracer_provider is not None:
            # The app's provider: add only what was asked for; it already exports.
            for processor in processors:
                tracer_provider.add_span_processor(processor)
            if export and endpoint:
                tracer_provider.add_span_processor(export_processor(endpoint, api_key))
            _provider, _owned = tracer_provider, False
            _tracers.clear()
            return tracer_provider
        attributes = {SERVICE_NAME: service_name} if service_name else {}
        provider = TracerProvider(
            resource=Resource.create(attributes),
            span_limits=SpanLimits(
                max_span_attributes=MAX_SPAN_ATTRIBUTES,
                max_attribute_length=SpanLimits.UNSET,
                max_span_attribute_length=SpanLimits.UNSET,
            ),
        )
        for processor in processors:
            provider.add_span_processor(processor)
        if export:
            provider.add_span_processor(export_processor(endpoint, api_key))
        _provider, _owned = provider, True
        _tracers.clear()
        return provider


_SCOPE = "faithmon_instrumentation"
_tracers: dict[int, trace.Tracer] = {}


def tracer() -> trace.Tracer:
    """The shim's tracer on its provider, or on the global one before ``setup()``.

    Cached per provider: creating a tracer costs more than a span does.
    """
    provider = _provider
    key = id(provider)
    cached = _tracers.get(key)
    if cached is None:
        # Without a provider of its own, a proxy that follows the global provider
        # even if the app sets one later.
        source = trace if provider is None else provider
        cached = _tracers[key] = source.get_tracer(_SCOPE)
    return cached


def flush(timeout_millis: int = 30_000) -> bool:
    provider = _provider
    if provider is None:
        return True
    try:
        return provider.force_flush(timeout_millis)
    except Exception:  # telemetry never breaks the host
        logger.exception("faithmon_instrumentation: flush failed")
        return False


def shutdown() -> None:
    """Flush and forget the provider, so that ``setup()`` may run again.

    A provider the app handed in is flushed, not shut down: it is the app's.
    """
    global _provider
    with _lock:
        provider, _provider = _provider, None
        _tracers.clear()
    if provider is not None:
        try:
            provider.shutdown() if _owned else provider.force_flush()
        except Exception:
            logger.exception("faithmon_instrumentation: shutdown failed")
