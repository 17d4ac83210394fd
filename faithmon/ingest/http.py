"""OTLP/HTTP receiver (Starlette): ``POST /v1/traces`` and ``/v1/logs`` into the pipeline.

Replies follow the OTLP/HTTP specification, in the request's own encoding
(protobuf or JSON): 200 with an Export*ServiceResponse (``partial_success``
when items were rejected), 400 with a google.rpc.Status for a body that cannot
be decoded, 413 for a body over the limit (checked after decompression, without
inflating past it), 415 for an unknown content type, and 503 with Retry-After
while the pipeline cannot take more, so exporters retry instead of dropping.
Decoding runs in a worker thread so a large body does not stall the event loop.
"""

from __future__ import annotations

import logging
import zlib
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from typing import Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from ..errors import DecodeError, SaturatedError
from . import otlp
from .pipeline import Pipeline

logger = logging.getLogger(__name__)

RETRY_AFTER_SECONDS = "5"
_CONTENT_TYPES = (otlp.PROTOBUF, otlp.JSON)


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


Decode = Callable[[bytes, str], tuple[Sequence[Any], int]]


def _export_endpoint(
    pipeline: Pipeline, max_body_bytes: int, decode: Decode, logs: bool
) -> Callable[[Request], Any]:
    noun = "log records" if logs else "spans"

    async def endpoint(request: Request) -> Response:
        content_type = request.headers.get("content-type", "").split(";")[0].strip().lower()
        if content_type not in _CONTENT_TYPES:
            return Response(
                f"unsupported content type {content_type!r}; send {' or '.join(_CONTENT_TYPES)}",
                status_code=415,
            )
        if pipeline.saturated:
            reason = "shutting down" if pipeline.draining else "the pipeline is saturated"
            return _unavailable(reason)
        encoding = request.headers.get("content-encoding", "").strip().lower()
        try:
            raw = await _read_body(request, max_body_bytes)

            def decode_body() -> tuple[Sequence[Any], int]:
                return decode(_inflate(raw, encoding, max_body_bytes), content_type)

            items, rejected = await run_in_threadpool(decode_body)
        except BodyTooLarge:
            body = otlp.status_body("request body too large", content_type)
            return Response(body, status_code=413, media_type=content_type)
        except DecodeError as exc:
            logger.info("faithmon: rejected an OTLP body: %s", exc)
            return Response(otlp.status_body(str(exc), content_type), 400, media_type=content_type)
        try:
            pipeline.submit(items)
        except SaturatedError as exc:
            return _unavailable(str(exc))
        message = f"{rejected} {noun} without valid trace or span ids" if rejected else ""
        return Response(
            otlp.export_response(rejected, message, content_type, logs=logs),
            media_type=content_type,
        )

    return endpoint


def _unavailable(reason: str) -> Response:
    logger.warning("faithmon: answering 503: %s", reason)
    return Response(
        "faithmon is saturated; retry later",
        status_code=503,
        headers={"Retry-After": RETRY_AFTER_SECONDS},
    )


def create_app(
    pipeline: Pipeline,
    max_body_bytes: int = 64 * 1024 * 1024,
    *,
    run_pipeline: bool = False,
    before_stop: Callable[[], None] | None = None,
    extra_routes: Sequence[Route] = (),
) -> Starlette:
    """The receiver app; with ``run_pipeline`` its lifespan starts and stops the pipeline.

    Stopping runs ``before_stop`` (the gRPC receiver closes there), then saves
    every trace still buffered, so a SIGTERM loses nothing.
    """

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        if run_pipeline:
            pipeline.start()
        try:
            yield
        finally:
            if before_stop is not None:
                before_stop()
            if run_pipeline:
                pipeline.stop()

    async def healthz(request: Request) -> Response:
        if pipeline.saturated:
            return JSONResponse({"status": "saturated"}, status_code=503)
        return JSONResponse({"status": "ok"})

    return Starlette(
        lifespan=lifespan,
        routes=[
            Route(
                "/v1/traces",
                _export_endpoint(pipeline, max_body_bytes, otlp.decode_traces, logs=False),
                methods=["POST"],
            ),
            Route(
                "/v1/logs",
                _export_endpoint(pipeline, max_body_bytes, otlp.decode_logs, logs=True),
                methods=["POST"],
            ),
            Route("/healthz", healthz, methods=["GET"]),
            *extra_routes,
        ],
    )
