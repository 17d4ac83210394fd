"""OTLP/gRPC receiver (port 4317): the same pipeline as OTLP/HTTP.

Uses grpcio with the service stubs that opentelemetry-proto ships, so the
receiver speaks exactly the collector's protocol. A full pipeline answers
UNAVAILABLE, which OTLP exporters retry.
"""

from __future__ import annotations

import logging
from concurrent import futures

import grpc
from opentelemetry.proto.collector.logs.v1 import logs_service_pb2_grpc
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import (
    ExportLogsServiceRequest,
    ExportLogsServiceResponse,
)
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2_grpc
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)

from ..errors import ConfigError, SaturatedError, TooLargeToAdmit
from . import otlp
from .pipeline import Pipeline
from .tenancy import Authorize, stamp

logger = logging.getLogger(__name__)


_CODES = {
    401: grpc.StatusCode.UNAUTHENTICATED,
    403: grpc.StatusCode.PERMISSION_DENIED,
    503: grpc.StatusCode.UNAVAILABLE,
}


def _tenant(authorize: Authorize | None, context: grpc.ServicerContext) -> str | None:
    """The caller's tenant, or the call aborted as OTLP/HTTP would answer 401/403/503."""
    if authorize is None:
        return None
    header = next(
        (str(v) for k, v in context.invocation_metadata() if k.lower() == "authorization"),
        None,
    )
    status, tenant, reason = authorize(header)
    if status != 200:
        context.abort(_CODES.get(status, grpc.StatusCode.UNAUTHENTICATED), reason)
    return tenant


class _Traces(trace_service_pb2_grpc.TraceServiceServicer):
    def __init__(self, pipeline: Pipeline, authorize: Authorize | None) -> None:
        self._pipeline, self._authorize = pipeline, authorize

    def Export(  # the generated service names it so
        self, request: ExportTraceServiceRequest, context: grpc.ServicerContext
    ) -> ExportTraceServiceResponse:
        tenant = _tenant(self._authorize, context)
        spans, rejected = otlp.spans_from_request(request)
        try:
            self._pipeline.submit(stamp(spans, tenant))
        except TooLargeToAdmit as exc:  # not retryable: smaller batches are the remedy
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(exc))
        except SaturatedError as exc:
            context.abort(grpc.StatusCode.UNAVAILABLE, str(exc))
        response = ExportTraceServiceResponse()
        if rejected:
            response.partial_success.rejected_spans = rejected
            response.partial_success.error_message = (
                f"{rejected} spans without valid trace or span ids"
            )
        return response


class _Logs(logs_service_pb2_grpc.LogsServiceServicer):
    def __init__(self, pipeline: Pipeline, authorize: Authorize | None) -> None:
        self._pipeline, self._authorize = pipeline, authorize

    def Export(  # the generated service names it so
        self, request: ExportLogsServiceRequest, context: grpc.ServicerContext
    ) -> ExportLogsServiceResponse:
        tenant = _tenant(self._authorize, context)
        logs, rejected = otlp.logs_from_request(request)
        try:
            self._pipeline.submit(stamp(logs, tenant))
        except TooLargeToAdmit as exc:
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(exc))
        except SaturatedError as exc:
            context.abort(grpc.StatusCode.UNAVAILABLE, str(exc))
        response = ExportLogsServiceResponse()
        if rejected:
            response.partial_success.rejected_log_records = rejected
            response.partial_success.error_message = f"{rejected} log records without a trace id"
        return response


def start(
    pipeline: Pipeline,
    host: str,
    port: int,
    max_message_bytes: int,
    workers: int = 4,
    authorize: Authorize | None = None,
) -> tuple[grpc.Server, int]:
    """Start serving; returns the server and the port it bound (useful with port 0).

    With ``authorize`` each call's ``authorization`` metadata must carry an ingest key.
    """
    server = grpc.server(
        futures.ThreadPoolExecutor(max_workers=workers, thread_name_prefix="faithmon-grpc"),
        options=[
            ("grpc.max_receive_message_length", max_message_bytes),
            ("grpc.max_send_message_length", 4 * 1024 * 1024),
        ],
    )
    trace_service_pb2_grpc.add_TraceServiceServicer_to_server(_Traces(pipeline, authorize), server)  # type: ignore[no-untyped-call]
    logs_service_pb2_grpc.add_LogsServiceServicer_to_server(_Logs(pipeline, authorize), server)  # type: ignore[no-untyped-call]
    try:
        bound = server.add_insecure_port(f"{host}:{port}")
    except RuntimeError:
        raise ConfigError(
            f"cannot listen for OTLP/gRPC on {host}:{port}: the port is in use or not "
            "allowed; choose another --grpc-port (0 turns gRPC off)"
        ) from None
    server.start()
    logger.info("faithmon: receiving OTLP/gRPC on %s:%d", host, bound)
    return server, bound
