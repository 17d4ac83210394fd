"""The ASGI middleware in front of every route: refuses a Host this server does not answer
to (DNS rebinding) and a change sent from another origin's page (request forgery), finds
the caller's key (a bearer header or the dashboard's session cookie), answers 401 or 403,
and hands the grant to the route in ``request.state.grant`` (and its tenant in
``request.state.tenant``)."""

from __future__ import annotations

import logging
from urllib.parse import quote, urlsplit

from starlette.concurrency import run_in_threadpool
from starlette.datastructures import Headers
from starlette.responses import PlainTextResponse, RedirectResponse, Response
from starlette.types import ASGIApp, Receive, Scope, Send

from .auth import OPEN, AuthConfig, KeyRing, is_open, needed_scope
from .keys import Grant, bearer
from .sessions import COOKIE, SessionSigner

logger = logging.getLogger(__name__)


class Guard:
    def __init__(
        self, app: ASGIApp, ring: KeyRing, config: AuthConfig, signer: SessionSigner
    ) -> None:
        self._app, self._ring, self._config, self._signer = app, ring, config, signer

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self._app(scope, receive, send)
            return
        response, grant = await self._decide(scope)
        if response is not None:
            await response(scope, receive, send)
            return
        state = scope.setdefault("state", {})
        state["grant"] = grant
        state["tenant"] = grant.tenant if grant is not None else None
        await self._app(scope, receive, send)

    async def _decide(self, scope: Scope) -> tuple[Response | None, Grant | None]:
        method, path = scope["method"], scope["path"]
        headers = Headers(scope=scope)
        if not _host_allowed(headers.get("host", ""), self._config.allowed_hosts):
            return _refuse(400, "this Host is not served: see FAITHMON_ALLOWED_HOSTS"), None
        if method not in _SAFE and not _same_origin(headers):
            logger.info("faithmon: refused a cross-origin %s to %s", method, path)
            return _refuse(403, "a request from another origin may not change anything"), None
        needed = needed_scope(method, path, self._config)
        if needed is None:
            return None, None  # /healthz and the login page never wait on the store
        if not self._ring.loaded():
            try:  # the first read: nothing to decide with until it answers (bounded)
                await run_in_threadpool(self._ring.refresh)
            except Exception:
                return _refuse(503, "faithmon cannot read its API keys; retry later"), None
        elif not self._ring.fresh():
            self._ring.refresh_soon()  # in the background: this request uses the keys read
        if is_open(self._config, self._ring):
            return None, OPEN
        presented = bearer(headers.get("authorization", ""))
        grant: Grant | None = None
        if presented is not None:
            grant = self._ring.check(presented)
        else:
            opened = self._signer.verify(_cookie(headers.get("cookie", "")))
            if opened is not None:
                grant = self._ring.by_id(opened.key_id, opened.opened_at)
        if grant is None:
            if presented is None and _wants_page(method, path, headers):
                target = quote(
                    path
                    + ("?" + scope["query_string"].decode() if scope.get("query_string") else "")
                )
                return RedirectResponse(f"/login?next={target}", status_code=303), None
            reason = "unknown or revoked API key" if presented else "an API key is needed"
            return _refuse(401, f"{reason}: send Authorization: Bearer KEY"), None
        if not grant.allows(needed):
            logger.info("faithmon: key %s lacks scope %s for %s", grant.prefix, needed, path)
            return _refuse(403, f"this key lacks the {needed} scope"), None
        return None, grant


# Methods that change nothing: a page of another origin may send them.
_SAFE = frozenset({"GET", "HEAD", "OPTIONS"})


def _host_allowed(host: str, allowed: frozenset[str] | None) -> bool:
    """``host`` (a Host header, with or without a port) names this server."""
    if allowed is None:
        return True
    name = urlsplit(f"//{host}").hostname
    return name is not None and name.lower() in allowed


def _same_origin(headers: Headers) -> bool:
    """A browser's request from this server's own pages, or a client that is no browser.

    Browsers name the page a request comes from in Origin (Referer when they do not
    send one); a page on another port or site, or an opaque origin ("null"), may not
    post here even with the user's session cookie. A request naming no page at all
    comes from a program (an OTLP exporter, curl) and needs its key as any other."""
    source = headers.get("origin") or headers.get("referer")
    if source is None:
        return True
    if source == "null":
        return False
    return urlsplit(source).netloc.lower() == headers.get("host", "").lower()


def _refuse(status: int, reason: str) -> Response:
    headers = {"WWW-Authenticate": "Bearer"} if status == 401 else {}
    return PlainTextResponse(reason + "\n", status_code=status, headers=headers)


def _cookie(header: str) -> str:
    for part in header.split(";"):
        name, _, value = part.strip().partition("=")
        if name == COOKIE:
            return value
    return ""


def _wants_page(method: str, path: str, headers: Headers) -> bool:
    """A browser asking for a dashboard page is sent to the login page, not given a 401."""
    if method != "GET" or path.startswith(("/api/", "/v1/", "/metrics", "/openapi.json")):
        return False
    return "text/html" in headers.get("accept", "")
