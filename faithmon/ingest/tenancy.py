"""Tenants stamped at the door: what a tenant-bound key sends belongs to its tenant,
whatever the spans say.

The receiver writes the key's tenant under ``STAMP`` into each span's resource, and
into each log record's attributes (a log record here has no resource, and the spool
keeps its attributes), before the items are spooled, so a replay after a crash keeps
it; the assembler keys traces by it and the extractor sets the record's ``tenant``
label from it, over any label the app set. A stamp the app wrote itself is dropped
unless the receiver made it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from .spans import IngestSpan, TraceItem

STAMP = "faithmon.ingest.tenant"

Authorize = Callable[[str | None], tuple[int, str | None, str]]
"""An ``Authorization`` header value (or None) → (status, tenant, reason): 200 with the
key's tenant (None for a key bound to none), else 401, 403 or 503 with a one-line reason.
The composition root builds it from the API keys; ingest only calls it."""


def _restamped(values: Mapping[str, Any], tenant: str | None) -> dict[str, Any]:
    out = {k: v for k, v in values.items() if k != STAMP}
    if tenant is not None:
        out[STAMP] = tenant
    return out


def stamp(items: Sequence[TraceItem], tenant: str | None) -> list[TraceItem]:
    """The items, spans and log records alike, stamped with ``tenant`` (or rid of any
    stamp the sender wrote, when the key is bound to no tenant)."""
    stamped: list[TraceItem] = []
    # Spans of one request share their resource: so do the stamped copies.
    resources: dict[int, dict[str, Any]] = {}
    for item in items:
        if isinstance(item, IngestSpan):
            if tenant is not None or STAMP in item.resource:
                resource = resources.get(id(item.resource))
                if resource is None:
                    resource = resources[id(item.resource)] = _restamped(item.resource, tenant)
                item = replace(item, resource=resource)
        elif tenant is not None or STAMP in item.attributes:
            item = replace(item, attributes=_restamped(item.attributes, tenant))
        stamped.append(item)
    return stamped


def tenant_of(item: TraceItem) -> str | None:
    """The tenant the receiver stamped on a span or log record, if any."""
    value = (item.resource if isinstance(item, IngestSpan) else item.attributes).get(STAMP)
    return value if isinstance(value, str) and value else None


def stamped_tenant(items: Sequence[TraceItem]) -> str | None:
    """The tenant the receiver stamped on a trace's spans or log records, if any."""
    for item in items:
        tenant = tenant_of(item)
        if tenant is not None:
            return tenant
    return None
