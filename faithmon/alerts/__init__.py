"""Alerts: their lifecycle (``lifecycle.py``), every sink (log and list sinks there, the HTTP
and e-mail sinks in ``sinks.py``, where they may send in ``egress.py``) and the worker's
OpenTelemetry output (``telemetry.py``)."""

from .lifecycle import (
    SEVERITY,
    ListSink,
    LogSink,
    Policy,
    deliver,
    describe,
    reconcile,
    to_json,
    to_tell,
)

__all__ = [
    "SEVERITY",
    "ListSink",
    "LogSink",
    "Policy",
    "deliver",
    "describe",
    "reconcile",
    "to_json",
    "to_tell",
]
