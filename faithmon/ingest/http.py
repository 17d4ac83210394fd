"""OTLP/HTTP receiver (Starlette): ``POST /v1/traces`` into the pipeline.

Replies follow the OTLP/HTTP specification: 200 with an
ExportTraceServiceResponse (``partial_success`` when spans were rejected), 400
with a google.rpc.Status for a body that cannot be decoded, 413 for a body over
the limit (checked after decompression, without inflating past it), 415 for an
unknown content type, and 503 with Retry-After while the pipeline cannot keep
up, so exporters retry instead of dropping spans.
"""

from __future__ import annotations

import logging
import zlib
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from ..errors import DecodeError, SaturatedError
from . import otlp
from .pipeline import Pipeline

logger = logging.getLogger(__name__)

RETRY_AFTER_SECONDS = "5"


class BodyTooLarge(Exception):
    pass


async def _read_body(request: Request, limit: int) -> bytes:
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise BodyTooLarge
    parts: list[bytes] = []
    size = 0
    async for part in request.stream():
        size += len(part)
        if size > limit:
            raise BodyTooLarge
        parts.append(part)
    return b"".join(parts)


def _inflate(body: bytes, encoding: str, limit: int) -> bytes:
    if encoding in ("", "identity"):
        return body
    if encoding == "gzip":
        inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
    elif encoding == "deflate":
        inflater = zlib.decompressobj()
    else:
        raise DecodeError(f"unsupported Content-Encoding {encoding!r}")
    parts: list[bytes] = []
    size = 0
    try:
        while True:
            part = inflater.decompress(body, limit + 1 - size)
            size += len(part)
            if size > limit:
                raise BodyTooLarge
            parts.append(part)
            if inflater.unconsumed_tail:
                raise BodyTooLarge  # output capped before the input ran out
            if not inflater.eof:
                raise DecodeError(f"truncated {encoding} body")
            body = inflater.unused_data
            if not body or encoding != "gzip":
                break
            # RFC 1952: a gzip body may hold several members, one after another.
            inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
    except zlib.error as exc:
        raise DecodeError(f"bad {encoding} body: {exc}") from None
    return b"".join(parts)


def _protobuf(body: bytes, status_code: int = 200) -> Response:
    return Response(body, status_code=status_code, media_type=otlp.PROTOBUF)


def create_app(
    pipeline: Pipeline, max_body_bytes: int = 64 * 1024 * 1024, *, run_pipeline: bool = False
) -> Starlette:
    """The receiver app; with ``run_pipeline`` its lifespan starts and stops the pipeline.

    Stopping saves every trace still buffered, so a SIGTERM loses nothing.
    """

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        if run_pipeline:
            pipeline.start()
        try:
            yield
        finally:
            if run_pipeline:
                pipeline.stop()

    async def traces(request: Request) -> Response:
        content_type = request.headers.get("content-type", "").split(";")[0].strip().lower()
        if content_type != otlp.PROTOBUF:
            return Response(
                f"unsupported content type {content_type!r}; send {otlp.PROTOBUF}",
                status_code=415,
            )
        try:
            raw = await _read_body(request, max_body_bytes)
            encoding = request.headers.get("content-encoding", "").strip().lower()
            spans, rejected = otlp.decode_traces(_inflate(raw, encoding, max_body_bytes))
        except BodyTooLarge:
            return _protobuf(otlp.status_body("request body too large"), 413)
        except DecodeError as exc:
            logger.info("faithmon: rejected an OTLP body: %s", exc)
            return _protobuf(otlp.status_body(str(exc)), 400)
        try:
            pipeline.submit(spans)
        except SaturatedError as exc:
            logger.warning("faithmon: answering 503: %s", exc)
            return Response(
                "faithmon is saturated; retry later",
                status_code=503,
                headers={"Retry-After": RETRY_AFTER_SECONDS},
            )
        message = f"{rejected} spans without valid trace or span ids" if rejected else ""
        return _protobuf(otlp.export_response(rejected, message))

    async def healthz(request: Request) -> Response:
        if pipeline.saturated:
            return JSONResponse({"status": "saturated"}, status_code=503)
        return JSONResponse({"status": "ok"})

    return Starlette(
        lifespan=lifespan,
        routes=[
            Route("/v1/traces", traces, methods=["POST"]),
            Route("/healthz", healthz, methods=["GET"]),
        ],
    )
