"""The dashboard: server-rendered pages over the store, behind the same keys as the API
(a browser logs in once at ``/login`` and carries a session cookie)."""

from __future__ import annotations

from starlette.routing import Route

from ...store import Sessions
from ..auth import KeyRing
from ..sessions import SessionSigner
from . import login, overview, trace
from .shell import static_route


def routes(
    sessions: Sessions, auth: tuple[KeyRing, SessionSigner] | None, judge: str | None = None
) -> list[Route]:
    """Every page; the login pages only when keys are checked at all. ``judge`` is whose
    scores are shown (None: the judge of the newest evaluation)."""
    found = [static_route(), *overview.routes(sessions, judge), *trace.routes(sessions)]
    if auth is not None:
        found += login.routes(*auth)
    return found
