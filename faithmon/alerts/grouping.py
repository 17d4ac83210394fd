"""Grouped notifications, as Alertmanager groups them: what a route with grouping sends,
and when.

A route that sets any of ``group_by``, ``group_wait``, ``group_interval`` or
``repeat_interval`` is *grouped*: its alerts wait in the store's outbox, one group per
value of its ``group_by`` labels (``["..."]``: every label, so each alert is its own group;
empty: the whole route is one group), and each group goes out as one message:

- the first message ``group_wait`` after the group's first alert (30 s unless set), so
  alerts raised by one drift run arrive together;
- later ones no sooner than ``group_interval`` after the previous (5 min unless set);
- a firing alert is told at most once per ``repeat_interval`` (4 h unless set), however
  often it flaps; a resolution is told only for an alert whose firing was told; a
  pending alert is not told (it is held back by its kind's ``for``, or not yet sure).

A route that sets none of them sends each alert as it changes, as the
``FAITHMON_ALERT_*`` settings always did. This module decides; :mod:`faithmon.jobs.notify`
keeps the outbox and the groups' state in the store.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from ..model import Alert, segment_key
from .rules import Route

GROUP_WAIT = timedelta(seconds=30)
GROUP_INTERVAL = timedelta(minutes=5)
REPEAT_INTERVAL = timedelta(hours=4)
EVERY_LABEL = "..."


@dataclass(frozen=True, slots=True)
class Timing:
    group_wait: timedelta
    group_interval: timedelta
    repeat_interval: timedelta


@dataclass(frozen=True, slots=True)
class Told:
    """What one group last told of one alert: its state, and when its firing was told."""

    state: str
    fired_at: datetime | None = None


def grouped(route: Route) -> bool:
    return bool(route.group_by) or any(
        t is not None for t in (route.group_wait, route.group_interval, route.repeat_interval)
    )


def timing(route: Route) -> Timing:
    return Timing(
        route.group_wait or GROUP_WAIT,
        route.group_interval or GROUP_INTERVAL,
        route.repeat_interval or REPEAT_INTERVAL,
    )


def route_key(route: Route) -> str:
    """A route's identity across worker restarts: a digest of what it matches, where it
    sends and how it groups (its place in the file may change; an edited route is new)."""
    text = json.dumps(
        [[str(m) for m in route.matchers], list(route.sinks), list(route.group_by)],
        separators=(",", ":"),
    )
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def group_labels(route: Route, labels: Mapping[str, str]) -> dict[str, str]:
    """The labels that name an alert's group on ``route``."""
    if EVERY_LABEL in route.group_by:
        return dict(labels)
    return {name: labels.get(name, "") for name in route.group_by}


def group_key(labels: Mapping[str, str]) -> str:
    text = json.dumps(sorted(labels.items()), separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def alert_key(alert: Alert) -> str:
    """One incident's identity: its kind and segment (its row id changes on a reopen)."""
    return f"{alert.rule}|{segment_key(alert.segment)}"


def is_due(
    first_waiting: datetime, last_sent: datetime | None, now: datetime, when: Timing
) -> bool:
    """Whether a group with alerts waiting since ``first_waiting`` is to be sent now: its
    first alert has waited ``group_wait`` (so the alerts of one run travel together), and
    its last message is ``group_interval`` old."""
    if now - first_waiting < when.group_wait:
        return False
    return last_sent is None or now - last_sent >= when.group_interval


def latest(alerts: Iterable[Alert]) -> list[Alert]:
    """Each incident's newest change, in the order the incidents first appeared."""
    newest: dict[str, Alert] = {}
    for alert in alerts:
        key = alert_key(alert)
        kept = newest.get(key)
        if kept is None or alert.updated_at >= kept.updated_at:
            newest[key] = alert
    return list(newest.values())


def select(
    waiting: Sequence[Alert], told: Mapping[str, Told], now: datetime, repeat: timedelta
) -> tuple[list[Alert], dict[str, Told]]:
    """What of ``waiting`` goes into the group's message, and what the group has told
    after it (see the module's docstring)."""
    sent: list[Alert] = []
    after = dict(told)
    for alert in latest(waiting):
        key = alert_key(alert)
        last = told.get(key)
        if alert.state == "firing":
            if last is not None and last.fired_at is not None and now - last.fired_at < repeat:
                continue  # told within the repeat interval: a flap or a reminder too soon
            sent.append(alert)
            after[key] = Told("firing", now)
        elif alert.state == "resolved":
            if last is None or last.state != "firing":
                continue  # its firing was never told (a blip, or a flap held back)
            sent.append(alert)
            after[key] = Told("resolved", last.fired_at)
    return sent, after


def told_to_json(told: Mapping[str, Told]) -> dict[str, Any]:
    return {
        key: {"state": t.state, "fired_at": t.fired_at.isoformat() if t.fired_at else None}
        for key, t in told.items()
    }


def told_from_json(value: Any) -> dict[str, Told]:
    if not isinstance(value, dict):
        return {}
    out = {}
    for key, item in value.items():
        if not isinstance(item, dict):
            continue
        fired = item.get("fired_at")
        out[str(key)] = Told(
            str(item.get("state", "")), datetime.fromisoformat(fired) if fired else None
        )
    return out


def forget_before(told: Mapping[str, Told], cutoff: datetime) -> dict[str, Told]:
    """``told`` without resolved incidents whose firing was told before ``cutoff`` (the
    repeat interval no longer holds them back), so a group's state stays small."""
    return {
        key: t
        for key, t in told.items()
        if t.state == "firing" or (t.fired_at is not None and t.fired_at >= cutoff)
    }
