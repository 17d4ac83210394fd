"""Alerts: their lifecycle (``lifecycle.py``), every sink (``sinks/``, one module each, found
through ``sinks.SINKS``; where they may send in ``egress.py``) and the worker's
OpenTelemetry output (``telemetry.py``)."""

from .lifecycle import (
    SEVERITY,
    Policy,
    deliver,
    describe,
    example_words,
    reconcile,
    to_json,
    to_tell,
)
from .sinks import ListSink, LogSink

__all__ = [
    "SEVERITY",
    "ListSink",
    "LogSink",
    "Policy",
    "deliver",
    "describe",
    "example_words",
    "reconcile",
    "to_json",
    "to_tell",
]
