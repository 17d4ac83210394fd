"""Tenants stamped at the door: what a tenant-bound key sends belongs to its tenant,
whatever the spans say.

The receiver writes the key's tenant into each span's resource under
``STAMP`` before the spans are spooled, so a replay after a crash keeps it; the
extractor then sets the record's ``tenant`` label from it, over any label the
app set. A stamp the app wrote itself is dropped unless the receiver made it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

from .spans import IngestSpan, TraceItem

STAMP = "faithmon.ingest.tenant"

Authorize = Callable[[str | None], tuple[int, str | None, str]]
"""An ``Authorization`` header value (or None) → (status, tenant, reason): 200 with the
key's tenant (None for a key bound to none), else 401, 403 or 503 with a one-line reason.
The composition root builds it from the API keys; ingest only calls it."""


def stamp(items: Sequence[TraceItem], tenant: str | None) -> list[TraceItem]:
    """The items with every span's resource stamped with ``tenant`` (or any stamp the
    sender wrote removed, when the key is bound to no tenant)."""
    stamped: list[TraceItem] = []
    for item in items:
        if isinstance(item, IngestSpan) and (tenant is not None or STAMP in item.resource):
            resource = {k: v for k, v in item.resource.items() if k != STAMP}
            if tenant is not None:
                resource[STAMP] = tenant
            item = replace(item, resource=resource)
        stamped.append(item)
    return stamped


def stamped_tenant(spans: Sequence[IngestSpan]) -> str | None:
    """The tenant the receiver stamped on a trace's spans, if any."""
    for span in spans:
        value = span.resource.get(STAMP)
        if isinstance(value, str) and value:
            return value
    return None
