"""The frame of every dashboard page: navigation, stylesheets, the one script, and the
headers that keep a page from running anything a trace smuggles into it.

Every value that comes from a trace is passed through ``html.escape`` by the page that
shows it; the Content-Security-Policy is the second wall: no inline script, no script
but the package's own (``/static/dashboard.js``, and a page's own asset such as
``review.js``), nothing from another origin.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape
from importlib import resources
from urllib.parse import parse_qs, quote, unquote

from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import Route

from ...report.style import CSS as REPORT_CSS
from ..keys import Grant

CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
)
HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    # No page address leaves for another site; the dashboard's own forms still carry
    # their origin, which the guard checks (no-referrer would make it "null").
    "Referrer-Policy": "same-origin",
    "X-Frame-Options": "DENY",
    "Cache-Control": "no-store",
}
REFRESH_SECONDS = 30

NAV = (
    ("/", "Overview"),
    ("/segments", "Segments"),
    ("/traces", "Traces"),
    ("/documents", "Documents"),
    ("/alerts", "Alerts"),
    ("/sentinels", "Sentinels"),
    ("/judges", "Judges"),
    ("/review", "Review"),
)


MAX_FORM_BYTES = 4096
NAME_COOKIE = "faithmon_name"
"""The name a person gave where no key names them (an open server), kept by the browser
so it is asked once; it names nobody's key and grants nothing."""
MAX_NAME = 100


def grant_of(request: Request) -> Grant | None:
    grant = request.scope.get("state", {}).get("grant")
    return grant if isinstance(grant, Grant) else None


def tenant_of(request: Request) -> str | None:
    tenant = request.scope.get("state", {}).get("tenant")
    return tenant if isinstance(tenant, str) else None


def keyed(request: Request) -> Grant | None:
    """The caller's key, when a key (not the open door) let the request in."""
    grant = grant_of(request)
    return grant if grant is not None and grant.key_id else None


def name_given(request: Request) -> str:
    """The name this browser gave before (``NAME_COOKIE``), or ""."""
    return unquote(request.cookies.get(NAME_COOKIE, "")).strip()[:MAX_NAME]


def typed_name(text: str) -> str:
    """A name as a form gives it, its runs of white space made one space, at most
    ``MAX_NAME`` characters ("" for none)."""
    return " ".join(text.split())[:MAX_NAME]


def remember_name(response: Response, name: str) -> None:
    """Keep the name a person typed for the next form that would ask it (a year)."""
    response.set_cookie(
        NAME_COOKIE, quote(name, safe=""), max_age=365 * 86400, httponly=True, samesite="strict"
    )


async def form_fields(request: Request) -> dict[str, str] | None:
    """A posted form's fields (the first value of each); None when it is too large."""
    raw = b""
    async for piece in request.stream():
        raw += piece
        if len(raw) > MAX_FORM_BYTES:
            return None
    return {k: v[0] for k, v in parse_qs(raw.decode("utf-8", "replace")).items()}


def _nav(here: str, grant: Grant | None) -> str:
    links = "".join(
        f'<a href="{path}"{" class=here" if path == here else ""}>{label}</a>'
        for path, label in NAV
    )
    who = ""
    if grant is not None and grant.key_id:
        tenant = f" · tenant {escape(grant.tenant)}" if grant.tenant else ""
        who = (
            f'<span class="who">key fm_{escape(grant.prefix)}_…{tenant} '
            '<form method="post" action="/logout"><button>Log out</button></form></span>'
        )
    return (
        f'<nav class="top"><div class="inner"><span class="brand">faithmon</span>{links}'
        f"{who}</div></nav>"
    )


def page(
    request: Request,
    title: str,
    body: str,
    here: str = "",
    status: int = 200,
    refresh: bool = True,
    assets: Sequence[str] = (),
) -> Response:
    """A whole page; ``body`` is HTML its caller built with every trace value escaped.
    ``assets`` names the page's own stylesheets and scripts in ``/static``."""
    seconds = REFRESH_SECONDS if refresh else 0
    own = "".join(
        f'<link rel="stylesheet" href="/static/{name}">'
        if name.endswith(".css")
        else f'<script src="/static/{name}" defer></script>'
        for name in assets
        if name in _STATIC
    )
    html = (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{escape(title)} · faithmon</title>"
        # Named, so a browser never asks for /favicon.ico (behind the key check).
        '<link rel="icon" href="/static/favicon.svg" type="image/svg+xml">'
        '<link rel="stylesheet" href="/static/report.css">'
        '<link rel="stylesheet" href="/static/dashboard.css">'
        f'<script src="/static/dashboard.js" defer></script>{own}</head>'
        f'<body data-refresh="{seconds}">{_nav(here, grant_of(request))}'
        f"<main>{body}</main></body></html>"
    )
    return HTMLResponse(html, status_code=status, headers=HEADERS)


def not_found(request: Request, what: str) -> Response:
    body = (
        f'<h1>Not found</h1><p class="muted">{escape(what)}</p>'
        '<p><a href="/">Back to the overview</a></p>'
    )
    return page(request, "Not found", body, status=404, refresh=False)


_STATIC = {
    "favicon.svg": "image/svg+xml",
    "dashboard.css": "text/css; charset=utf-8",
    "dashboard.js": "text/javascript; charset=utf-8",
    "review.css": "text/css; charset=utf-8",
    "review.js": "text/javascript; charset=utf-8",
}


async def _static(request: Request) -> Response:
    name = request.path_params["name"]
    if name == "report.css":
        return Response(REPORT_CSS, media_type="text/css; charset=utf-8", headers=HEADERS)
    if name not in _STATIC:
        return Response("not found\n", status_code=404, media_type="text/plain")
    text = resources.files("faithmon.api").joinpath("static", name).read_text()
    return Response(text, media_type=_STATIC[name], headers=HEADERS)


def static_route() -> Route:
    """``/static/{name}``: the stylesheets and the script, shipped in the package."""
    return Route("/static/{name}", _static, methods=["GET"])
