"""OTLP/HTTP routes (Starlette): ``POST /v1/traces`` and ``/v1/logs`` into the pipeline.

Replies follow the OTLP/HTTP specification, in the request's own encoding
(protobuf or JSON): 200 with an Export*ServiceResponse (``partial_success``
when items were rejected), 400 with a google.rpc.Status for a body that cannot
be decoded, 413 for a body over the limit (checked after decompression, without
inflating past it) or of more than ``MAX_GZIP_MEMBERS`` gzip members, 415 for
an unknown content type, 408 for a body that stops arriving, and 503 with
Retry-After while the pipeline cannot take more, so exporters retry instead of
dropping. Decoding runs in a worker thread so a large body does not stall the
event loop.

Every request costs bounded work: the body is read against an idle timeout and
a deadline, inflated in time linear in its size, and decoded with bounded
nesting (see ``otlp``). Log lines and error messages never quote the body.
"""

from __future__ import annotations

import asyncio
import logging
import traceback
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response
from starlette.routing import Route

from ..errors import DecodeError, SaturatedError, TooLargeToAdmit
from . import otlp
from .pipeline import Pipeline
from .tenancy import stamp

logger = logging.getLogger(__name__)

KEEP_ALIVE_SECONDS = 5
"""How long the server keeps an idle connection open (uvicorn ``timeout_keep_alive``)."""
# Longer than the keep-alive: a client that waits Retry-After and reuses its
# connection finds it closed, instead of racing the server's close.
RETRY_AFTER_SECONDS = str(KEEP_ALIVE_SECONDS + 2)
BODY_IDLE_SECONDS = 5.0
"""A body that sends nothing for this long gets 408 and the connection is closed."""
BODY_DEADLINE_SECONDS = 120.0
"""The longest a body may take in all, however steadily it trickles in."""
MAX_GZIP_MEMBERS = 1000
"""Exporters send one gzip member; many tiny ones are only a way to burn CPU."""
# Compressed input is fed in windows of this size, so what zlib copies out
# after each member (unused_data) is at most one window, not the rest of the body.
_INFLATE_WINDOW = 64 * 1024
_CONTENT_TYPES = (otlp.PROTOBUF, otlp.JSON)
# google.rpc.Code.DEADLINE_EXCEEDED
_DEADLINE_EXCEEDED = 4
_CLOSE = {"Connection": "close"}


class BodyTooLarge(Exception):
    """The body, before or after inflating, is over the limit (413).

    The connection stays open: uvicorn discards the rest of the body, so a
    client that sends it all before reading reads the 413, not a broken pipe.
    """

    def __init__(self, message: str = "request body too large") -> None:
        super().__init__(message)


class BodyTimeout(Exception):
    """The body stopped arriving, or took longer than the deadline (408)."""


async def _read_body(request: Request, limit: int, idle: float, deadline: float) -> bytes:
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise BodyTooLarge
    parts: list[bytes] = []
    size = 0
    loop = asyncio.get_running_loop()
    give_up = loop.time() + deadline
    try:
        async with asyncio.timeout(min(idle, deadline)) as timer:
            async for part in request.stream():
                size += len(part)
                if size > limit:
                    raise BodyTooLarge
                parts.append(part)
                timer.reschedule(min(loop.time() + idle, give_up))
    except TimeoutError:
        raise BodyTimeout from None
    return b"".join(parts)


def _inflate(body: bytes, encoding: str, limit: int, max_members: int = MAX_GZIP_MEMBERS) -> bytes:
    """``body`` decoded per Content-Encoding, in time linear in its size.

    Raises BodyTooLarge past ``limit`` bytes of output or ``max_members`` gzip
    members, DecodeError for a body that is not what its encoding says.
    """
    if encoding in ("", "identity"):
        return body
    if encoding == "gzip":
        wbits = 16 + zlib.MAX_WBITS
    elif encoding == "deflate":
        wbits = zlib.MAX_WBITS
    else:
        # A short token is shown as sent; anything else only by its length.
        shown = repr(encoding) if len(encoding) <= 20 and encoding.isascii() else ""
        shown = shown or f"of {len(encoding)} characters"
        raise DecodeError(f"unsupported Content-Encoding {shown}")
    view = memoryview(body)
    parts: list[bytes] = []
    size = 0
    offset = 0
    members = 0
    try:
        # RFC 1952: a gzip body may hold several members, one after another.
        while True:
            members += 1
            if members > max_members:
                raise BodyTooLarge(f"more than {max_members} gzip members")
            inflater = zlib.decompressobj(wbits)
            while not inflater.eof:
                if offset >= len(view):
                    raise DecodeError(f"truncated {encoding} body")
                data: bytes | memoryview = view[offset : offset + _INFLATE_WINDOW]
                offset += len(data)
                while data:
                    part = inflater.decompress(data, limit + 1 - size)
                    size += len(part)
                    if size > limit:
                        raise BodyTooLarge
                    parts.append(part)
                    data = inflater.unconsumed_tail
            offset -= len(inflater.unused_data)
            if offset >= len(view) or encoding != "gzip":
                break
    except zlib.error as exc:
        raise DecodeError(f"bad {encoding} body: {exc}") from None
    return b"".join(parts)


Decode = Callable[[bytes, str], tuple[Sequence[Any], int]]


@dataclass(frozen=True, slots=True)
class _Limits:
    max_body_bytes: int
    body_idle_seconds: float
    body_deadline_seconds: float


def _decode_safely(decode: Decode, raw: bytes, encoding: str, content_type: str, limit: int) -> Any:
    try:
        return decode(_inflate(raw, encoding, limit), content_type)
    except (BodyTooLarge, DecodeError):
        raise
    except Exception as exc:
        # A body no decoder step foresaw is still the client's bad data, not a 500;
        # the type and place are logged (never the message, which may quote the
        # body) so the gap gets fixed.
        frame = traceback.extract_tb(exc.__traceback__)[-1]
        logger.error(
            "faithmon: decoding failed unexpectedly (%s at %s:%d)",
            type(exc).__name__,
            Path(frame.filename).name,
            frame.lineno or 0,
        )
        raise DecodeError(f"body could not be decoded ({type(exc).__name__})") from None


def _export_endpoint(
    pipeline: Pipeline, limits: _Limits, decode: Decode, logs: bool
) -> Callable[[Request], Any]:
    noun = "log records" if logs else "spans"
    limit = limits.max_body_bytes

    async def endpoint(request: Request) -> Response:
        content_type = request.headers.get("content-type", "").split(";")[0].strip().lower()
        if content_type not in _CONTENT_TYPES:
            shown = repr(content_type) if len(content_type) <= 60 else "(too long to show)"
            return Response(
                f"unsupported content type {shown}; send {' or '.join(_CONTENT_TYPES)}",
                status_code=415,
            )
        if pipeline.saturated:
            reason = "shutting down" if pipeline.draining else "the pipeline is saturated"
            return _unavailable(reason)
        encoding = request.headers.get("content-encoding", "").strip().lower()
        try:
            raw = await _read_body(
                request, limit, limits.body_idle_seconds, limits.body_deadline_seconds
            )
            items, rejected = await run_in_threadpool(
                _decode_safely, decode, raw, encoding, content_type, limit
            )
        except ClientDisconnect:
            # Nothing was acknowledged and no one is there to answer: one line, no trace.
            logger.info("faithmon: the client went away before its request body arrived")
            return Response(status_code=499)
        except BodyTimeout:
            logger.info("faithmon: answering 408: the request body stopped arriving")
            body = otlp.status_body("request body timed out", content_type, _DEADLINE_EXCEEDED)
            return Response(body, 408, headers=_CLOSE, media_type=content_type)
        except BodyTooLarge as exc:
            body = otlp.status_body(str(exc), content_type)
            return Response(body, 413, media_type=content_type)
        except DecodeError as exc:
            logger.info("faithmon: rejected an OTLP body: %s", exc)
            return Response(otlp.status_body(str(exc), content_type), 400, media_type=content_type)
        # The key's tenant, which the auth middleware leaves in the request's state.
        items = stamp(items, request.scope.get("state", {}).get("tenant"))
        try:
            # In a thread: with a spool, submit waits for its fsync.
            await run_in_threadpool(pipeline.submit, items)
        except TooLargeToAdmit as exc:
            # Not retryable (a 503 would be retried with the same batch forever).
            logger.warning("faithmon: answering 413: %s", exc)
            return Response(otlp.status_body(str(exc), content_type), 413, media_type=content_type)
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


def otlp_routes(
    pipeline: Pipeline,
    max_body_bytes: int = 64 * 1024 * 1024,
    *,
    body_idle_seconds: float = BODY_IDLE_SECONDS,
    body_deadline_seconds: float = BODY_DEADLINE_SECONDS,
) -> list[Route]:
    """``POST /v1/traces`` and ``/v1/logs``, feeding ``pipeline``; the app that mounts
    them (``faithmon.api.app``) owns the pipeline's start and stop.

    A body that sends nothing for ``body_idle_seconds``, or is not complete
    after ``body_deadline_seconds``, gets 408.
    """
    limits = _Limits(max_body_bytes, body_idle_seconds, body_deadline_seconds)
    return [
        Route(
            "/v1/traces",
            _export_endpoint(pipeline, limits, otlp.decode_traces, logs=False),
            methods=["POST"],
        ),
        Route(
            "/v1/logs",
            _export_endpoint(pipeline, limits, otlp.decode_logs, logs=True),
            methods=["POST"],
        ),
    ]
