"""The read API, ``/api/v1``: one router per noun (traces, segments, alerts, silences,
documents, sentinels, judges, review), each with typed response models, so
``/openapi.json`` is generated.

The guard in front (``api/guard.py``) checks the key and its scope; the routes read the
key's tenant from the request and see only that tenant's records, segments and alerts.
Lists are paged by opaque cursors: ``{"items": [...], "next_cursor": ...}``.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends
from fastapi.security import HTTPBearer

from ...store import Sessions
from . import alerts, documents, judges, review, segments, sentinels, silences, traces
from ._common import ReadOptions

PREFIX = "/api/v1"

DESCRIPTION = """\
faithmon's read API: traces with their claim-level evaluations, drift per segment,
alerts and their silences, source documents, sentinel runs, judges, and the review
queue where people label the judge's claims.

Every call sends `Authorization: Bearer KEY` with the `read` scope (`review` to
acknowledge an alert, to make or end a silence, or to lease, label or skip a review
item). A key bound to a tenant sees only that tenant's traces, segments, alerts,
silences and review items (and the alerts about the judge); another tenant's trace or
alert is unknown (404), and its silences always carry `tenant=<its tenant>`. Sentinel
runs and judges are the same for every reader.

Lists answer `{"items": [...], "next_cursor": ...}`: pass `next_cursor` back as
`cursor` for the next page (null on the last); the review queue is not paged (its
`limit` most urgent items). Times are ISO-8601, UTC when no offset is given. A bad
query value answers 422 with the reason.

A segment is named by its labels, `name=value` joined by commas in name order
(`route=billing`, `route=billing,tenant=acme`); the segment of no label is `overall`.
"""

# Documents the bearer key in the OpenAPI spec; the guard, not this, enforces it.
_bearer = HTTPBearer(auto_error=False, description="An API key: `Authorization: Bearer KEY`.")


def _refusal(meaning: str) -> dict[str, Any]:
    return {"description": meaning, "content": {"text/plain": {"schema": {"type": "string"}}}}


# The guard's answers, before any route runs: one line of text, like every refusal of it.
_REFUSALS: dict[int | str, dict[str, Any]] = {
    401: _refusal("No key, or an unknown or revoked one"),
    403: _refusal("The key lacks the scope (`read`; `review` to acknowledge, silence or label)"),
}


def router(sessions: Sessions, options: ReadOptions | None = None) -> APIRouter:
    """Every read route under ``/api/v1``, over ``sessions``."""
    options = options or ReadOptions()
    api = APIRouter(prefix=PREFIX, dependencies=[Depends(_bearer)], responses=_REFUSALS)
    api.include_router(traces.router(sessions, options.proof_floor))
    api.include_router(segments.router(sessions, options))
    api.include_router(alerts.router(sessions))
    api.include_router(silences.router(sessions))
    api.include_router(documents.router(sessions))
    api.include_router(sentinels.router(sessions))
    api.include_router(judges.router(sessions, options))
    api.include_router(review.router(sessions, options))
    return api


__all__ = ["DESCRIPTION", "PREFIX", "ReadOptions", "router"]
