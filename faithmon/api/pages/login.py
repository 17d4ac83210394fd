"""``/login`` and ``/logout``: a key typed once becomes a signed session cookie
(HttpOnly, SameSite=Strict); the key itself is never stored in the browser. Logging out
ends, in the store, every session the key opened until then: a copy of the cookie is
worth nothing after it, on any receiver."""

from __future__ import annotations

from datetime import UTC, datetime
from html import escape

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from ...store import Sessions
from ...store import keys as store_keys
from ..auth import AuthConfig, KeyRing, is_open
from ..sessions import COOKIE, LIFETIME_SECONDS, SessionSigner
from .shell import HEADERS, form_fields, page


def _safe_next(target: str) -> str:
    """Only a path on this server: never an absolute URL an attacker put in the link."""
    if not target.startswith("/") or target.startswith("//") or "\\" in target:
        return "/"
    return target


def _form(request: Request, next_path: str, error: str = "") -> Response:
    problem = f'<p class="error">{escape(error)}</p>' if error else ""
    body = (
        '<form class="login card" method="post" action="/login">'
        "<h1>faithmon</h1>"
        '<p class="muted">Log in with an API key that has the <code>read</code> scope.</p>'
        f"{problem}"
        '<label for="key">API key</label>'
        '<input id="key" name="key" type="password" autocomplete="off" required autofocus>'
        f'<input type="hidden" name="next" value="{escape(next_path)}">'
        "<button type=submit>Log in</button></form>"
    )
    return page(request, "Log in", body, status=401 if error else 200, refresh=False)


def routes(
    ring: KeyRing, signer: SessionSigner, sessions: Sessions, config: AuthConfig
) -> list[Route]:
    async def show(request: Request) -> Response:
        next_path = _safe_next(request.query_params.get("next", "/"))
        if not ring.loaded():
            try:
                await run_in_threadpool(ring.refresh)
            except Exception:  # the keys cannot be read: the form, as ever, asks for one
                return _form(request, next_path)
        if is_open(config, ring):
            # No key is asked for: the page it would lead to opens as it is.
            return RedirectResponse(next_path, status_code=303, headers=HEADERS)
        return _form(request, next_path)

    async def submit(request: Request) -> Response:
        fields = await form_fields(request)
        if fields is None:
            return _form(request, "/", "That form is too large.")
        key = fields.get("key", "").strip()
        next_path = _safe_next(fields.get("next", "/"))
        if not ring.loaded():
            await run_in_threadpool(ring.refresh)
        elif not ring.fresh():
            ring.refresh_soon()
        grant = ring.check(key) if key else None
        if grant is None:
            return _form(request, next_path, "That key is unknown or revoked.")
        if not grant.allows("read"):
            return _form(request, next_path, "That key lacks the read scope.")
        response = RedirectResponse(next_path, status_code=303, headers=HEADERS)
        response.set_cookie(
            COOKIE,
            signer.issue(grant.key_id),
            max_age=LIFETIME_SECONDS,
            httponly=True,
            samesite="strict",
            secure=request.url.scheme == "https",
            path="/",
        )
        return response

    def end(key_id: int) -> None:
        with sessions.begin() as session:
            store_keys.end_sessions(session, key_id, datetime.now(UTC))
        ring.stale()
        ring.refresh()  # this receiver refuses the old cookie at once; others within seconds

    async def logout(request: Request) -> Response:
        opened = signer.verify(request.cookies.get(COOKIE, ""))
        if opened is not None:
            await run_in_threadpool(end, opened.key_id)
        response = RedirectResponse("/login", status_code=303, headers=HEADERS)
        response.delete_cookie(COOKIE, path="/", httponly=True, samesite="strict")
        return response

    return [
        Route("/login", show, methods=["GET"]),
        Route("/login", submit, methods=["POST"]),
        Route("/logout", logout, methods=["POST"]),
    ]
