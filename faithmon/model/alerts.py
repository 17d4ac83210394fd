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


@dataclass(frozen=True, slots=True)
class Acknowledgement:
    """Who took an alert, and when (the first acknowledgement stays)."""

    by: str
    at: datetime | None

    @property
    def line(self) -> str:
        """``acknowledged by NAME at TIME``, as the dashboard, the report, and the CLI say it."""
        at = f" at {self.at:%Y-%m-%d %H:%M:%S} UTC" if self.at is not None else ""
        return f"acknowledged by {self.by}{at}"


ACKED_BY, ACKED_AT = "acked_by", "acked_at"
"""The details an acknowledgement is recorded in (the state is the detector's alone)."""


def acknowledgement(alert: Alert) -> Acknowledgement | None:
    """The alert's acknowledgement; None while nobody has taken it."""
    by = alert.details.get(ACKED_BY)
    if not isinstance(by, str) or not by:
        return None
    at = alert.details.get(ACKED_AT)
    try:
        when = datetime.fromisoformat(at) if isinstance(at, str) else None
    except ValueError:
        when = None
    return Acknowledgement(by, when)


DETAIL_LABELS: dict[str, str] = {
    "stream": "stream watched",
    "baseline_rate": "baseline rate",
    "baseline_interval": "baseline rate (95%)",
    "baseline_records": "baseline records",
    "baseline_source": "baseline of",
    "current_rate": "current rate",
    "current_interval": "current rate (95%)",
    "records": "records since the detector restarted",
    "unsupported": "bad records among them",
    "recent_interval": "recent rate (95%)",
    "recovered": "recent rate back near the baseline",
    "recovered_runs": "drift runs since it came back",
    "statistic": "CUSUM",
    "threshold": "CUSUM threshold",
    "change_at": "change point",
    "last_at": "last record",
    "reset_at": "detector restarted at",
    "firing_seen_at": "last seen firing",
    "judge": "judge",
    "sentinel_status": "judge's sentinel standing",
    "explained_by": "explained by",
    "folded_into": "folded into",
    "causes": "points of the rate per cause",
    "dominant_cause": "mostly caused by",
    "reopened": "reopened",
    "muted_at": "muted at",
    "muted_by_silence": "muted by silence",
    ACKED_BY: "acknowledged by",
    ACKED_AT: "acknowledged at",
}
"""How people read an alert's details (the report, the dashboard, ``faithmon alerts
show``); a key not named here is read with its underscores as spaces."""


def detail_label(key: str) -> str:
    return DETAIL_LABELS.get(key, key.replace("_", " "))


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
