"""The HTTP application of ``faithmon serve``: ingest's OTLP routes, health, ``/metrics``,
the read API (``/api/v1``) and its reference (``/docs``) in one FastAPI app, whose
lifespan runs the ingest pipeline, behind the key check of ``guard`` when auth is given."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass

from fastapi import FastAPI
from fastapi.exception_handlers import http_exception_handler
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import BaseRoute, Route

from .. import __version__
from ..ingest.http import BODY_DEADLINE_SECONDS, BODY_IDLE_SECONDS, otlp_routes
from ..ingest.pipeline import Pipeline
from ..store import Sessions
from . import docs, metrics, pages, v1
from .auth import AuthConfig, KeyRing
from .guard import Guard
from .pages.shell import not_found as not_found_page
from .sessions import SessionSigner


@dataclass(frozen=True, slots=True)
class Auth:
    """What the guard needs: the keys, the policy, the cookie signer."""

    ring: KeyRing
    config: AuthConfig
    signer: SessionSigner


def health_route(pipeline: Pipeline) -> Route:
    """``GET /healthz``: 503 while the pipeline cannot take more, "degraded" while the
    store fails (still ready: what arrives is acknowledged into the spool until it fills)."""

    async def healthz(request: Request) -> Response:
        if pipeline.saturated:
            return JSONResponse({"status": "saturated"}, status_code=503)
        if pipeline.store_failing:
            return JSONResponse({"status": "degraded", "store": "failing"})
        return JSONResponse({"status": "ok"})

    return Route("/healthz", healthz, methods=["GET"])


# Paths whose callers are programs: an unknown one is answered in JSON, as the API answers.
PROGRAM_PATHS = ("/api/", "/v1/", "/openapi.json", "/metrics", "/healthz")


async def _not_found(request: Request, exc: Exception) -> Response:
    """An unknown address: a page with the navigation for a browser, JSON for a program
    (and every other HTTP error as FastAPI answers it)."""
    assert isinstance(exc, HTTPException)
    path = request.url.path
    browser = "text/html" in request.headers.get("accept", "")
    if exc.status_code == 404 and browser and not path.startswith(PROGRAM_PATHS):
        return not_found_page(request, f"There is no page at {path}.")
    return await http_exception_handler(request, exc)


def favicon_route() -> Route:
    """``/favicon.ico``: where a browser looks on a page that names no icon (the API's
    reference); the dashboard's pages name theirs."""

    async def favicon(request: Request) -> Response:
        return RedirectResponse("/static/favicon.svg", status_code=301)

    return Route("/favicon.ico", favicon, methods=["GET"])


def create_app(
    pipeline: Pipeline,
    max_body_bytes: int = 64 * 1024 * 1024,
    *,
    sessions: Sessions | None = None,
    auth: Auth | None = None,
    reads: v1.ReadOptions | None = None,
    run_pipeline: bool = False,
    before_stop: Callable[[], None] | None = None,
    extra_routes: Sequence[Route] = (),
    body_idle_seconds: float = BODY_IDLE_SECONDS,
    body_deadline_seconds: float = BODY_DEADLINE_SECONDS,
) -> FastAPI:
    """The served app; with ``sessions`` it also serves ``/metrics`` and the read API from
    the store (``reads``: the judge, drift and budget settings it reports on); with
    ``auth`` every route but ``/healthz`` asks for a key (without it, nothing does: the
    tests of ingest, and the benches, serve so).

    With ``run_pipeline`` its lifespan starts and stops the pipeline. Stopping
    runs ``before_stop`` (the gRPC receiver closes there), then saves every
    trace still buffered, so a SIGTERM loses nothing.
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

    routes: list[BaseRoute] = [
        *otlp_routes(
            pipeline,
            max_body_bytes,
            body_idle_seconds=body_idle_seconds,
            body_deadline_seconds=body_deadline_seconds,
        ),
        health_route(pipeline),
        docs.route(),
        favicon_route(),
        *([metrics.route(sessions)] if sessions is not None else []),
        # The dashboard's pages, with the login pages when keys are checked.
        *(
            pages.routes(
                sessions,
                (auth.ring, auth.signer, auth.config) if auth is not None else None,
                reads,
            )
            if sessions is not None
            else []
        ),
        *extra_routes,
    ]
    # FastAPI's own /docs and /redoc load their assets from a CDN: off.
    app = FastAPI(
        title="faithmon",
        description=v1.DESCRIPTION,
        version=__version__,
        lifespan=lifespan,
        routes=routes,
        docs_url=None,
        redoc_url=None,
        openapi_url="/openapi.json",
    )
    if sessions is not None:
        app.include_router(v1.router(sessions, reads))
        app.add_exception_handler(HTTPException, _not_found)
    if auth is not None:
        app.add_middleware(Guard, ring=auth.ring, config=auth.config, signer=auth.signer)
    return app
