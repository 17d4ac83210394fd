"""The dashboard: server-rendered pages over the store, behind the same keys as the API
(a browser logs in once at ``/login`` and carries a session cookie)."""

from __future__ import annotations

from starlette.routing import Route

from ...store import Sessions
from ..auth import AuthConfig, KeyRing
from ..sessions import SessionSigner
from ..v1 import ReadOptions
from . import judging, lists, login, overview, review, segments, silences, trace
from .shell import static_route


def routes(
    sessions: Sessions,
    auth: tuple[KeyRing, SessionSigner, AuthConfig] | None,
    reads: ReadOptions | None = None,
) -> list[Route]:
    """Every page; the login pages only when keys are checked at all. ``reads`` says whose
    scores are shown (no judge: the judge of the newest evaluation) and the budget."""
    options = reads or ReadOptions()
    found = [
        static_route(),
        *overview.routes(sessions, options),
        *silences.routes(sessions),
        *trace.routes(sessions),
        *lists.routes(sessions),
        *judging.routes(sessions, options),
        *segments.routes(sessions, options),
        *review.routes(sessions),
    ]
    if auth is not None:
        ring, signer, config = auth
        found += login.routes(ring, signer, sessions, config)
    return found
