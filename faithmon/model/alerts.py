"""Alerts, their states, and the sink protocol."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal, Protocol

AlertState = Literal["pending", "firing", "resolved"]


@dataclass(frozen=True, slots=True)
class Alert:
    """A drift alert; ``segment`` maps label names to values ({} is overall)."""

    rule: str
    segment: Mapping[str, str]
    state: AlertState
    severity: str
    opened_at: datetime
    updated_at: datetime
    resolved_at: datetime | None = None
    details: Mapping[str, Any] = field(default_factory=dict)
    id: int | None = None
    notified_at: datetime | None = None
    """When sinks were last told about it; equal to ``updated_at`` when this change is told."""


# Rules about the judge, not about any tenant's records: every reader may see them.
JUDGE_RULES = frozenset({"judge_drift", "judge_error"})


def visible_to(alert: Alert, tenant: str | None) -> bool:
    """Whether a reader bound to ``tenant`` (None: bound to none) may see ``alert``: its
    segment names that tenant, or it is about the judge."""
    if tenant is None:
        return True
    return alert.segment.get("tenant") == tenant or alert.rule in JUDGE_RULES


def acts_on(alert: Alert, tenant: str | None) -> bool:
    """Whether a key bound to ``tenant`` may act on ``alert`` (acknowledge it): its
    segment names that tenant. An alert every tenant sees (about the judge) is acted on
    by keys bound to no tenant only: one tenant's acknowledgement would be everyone's."""
    return tenant is None or alert.segment.get("tenant") == tenant


class AlertSink(Protocol):
    def send(self, alert: Alert) -> None: ...


@dataclass(frozen=True, slots=True)
class AlertGroup:
    """One notification carrying several alerts: those a grouped route gathered for one
    group (its ``group_by`` labels' values) since its last message."""

    route: str
    """The route's key (a digest of its matchers, sinks and grouping)."""
    labels: Mapping[str, str]
    alerts: tuple[Alert, ...]


class GroupSink(Protocol):
    """A sink that can send a group as one message; a sink without it hears each alert."""

    def send_group(self, group: AlertGroup) -> None: ...
