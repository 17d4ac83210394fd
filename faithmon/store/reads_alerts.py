"""Alerts as the read API pages through them (newest first, by state and rule) and as a
page or report shows them (every open one, then the newest resolved), for a tenant-bound
reader only those ``model.visible_to`` it (its tenant's, and the judge's): filtered,
ordered and cut in the database (``rules.alert_visible_to``), never loaded whole."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import Select, select
from sqlalchemy.orm import Session

from ..model import Alert, acts_on, segment_key, visible_to
from . import rules
from .alerts import ack_alert, to_alert
from .tables import AlertRow, ApiKeyRow

OPEN = ("pending", "firing")
"""The states of an alert not resolved, by name: a list of them reads ``ix_alerts_state_id``,
which ``state != 'resolved'`` could not."""

SHOWN = 200
"""The alerts a page or report shows at most; the API pages through them all."""


@dataclass(frozen=True, slots=True)
class AlertPage:
    items: tuple[Alert, ...]
    next: int | None
    """The id the next page starts below, if there is one."""


def _visible(session: Session, tenant: str | None) -> Select[AlertRow]:
    return select(AlertRow).where(
        rules.alert_visible_to(session, tenant, AlertRow.segment, AlertRow.rule)
    )


def alert_page(
    session: Session,
    limit: int,
    before: int | None = None,
    tenant: str | None = None,
    state: str | None = None,
    rule: str | None = None,
) -> AlertPage:
    """``limit`` alerts newest first below the id ``before``, of ``state`` and ``rule``."""
    query = _visible(session, tenant).order_by(AlertRow.id.desc()).limit(limit + 1)
    if before is not None:
        query = query.where(AlertRow.id < before)
    if state is not None:
        query = query.where(AlertRow.state == state)
    if rule is not None:
        query = query.where(AlertRow.rule == rule)
    rows = list(session.scalars(query))
    items = tuple(to_alert(row) for row in rows[:limit])
    return AlertPage(items, rows[limit - 1].id if len(rows) > limit else None)


def shown_alerts(
    session: Session,
    tenant: str | None = None,
    segment: Mapping[str, str] | None = None,
    limit: int = SHOWN,
) -> tuple[Alert, ...]:
    """What a page or report shows of the alerts visible to ``tenant`` (of one
    ``segment``, if given): every open one, then the newest resolved, ``limit`` in all,
    oldest first. Open alerts come first: one per rule and segment, they never pile up,
    and a long-open alert must not fall behind a run of newer resolved ones."""
    query = _visible(session, tenant).order_by(AlertRow.id.desc())
    if segment is not None:
        query = query.where(AlertRow.segment_key == segment_key(segment))
    found = list(session.scalars(query.where(AlertRow.state.in_(OPEN)).limit(limit)))
    if len(found) < limit:
        resolved = query.where(AlertRow.state == "resolved").limit(limit - len(found))
        found.extend(session.scalars(resolved))
    return tuple(to_alert(row) for row in sorted(found, key=lambda row: row.id))


def alert_for(session: Session, alert_id: int, tenant: str | None = None) -> Alert | None:
    """One alert; None when there is none or it is another tenant's."""
    row = session.get(AlertRow, alert_id)
    alert = to_alert(row) if row is not None else None
    return alert if alert is not None and visible_to(alert, tenant) else None


def ack_for(
    session: Session, alert_id: int, by: str, at: datetime, tenant: str | None = None
) -> Alert | None:
    """Acknowledge an alert the caller may see and act on (see :func:`alerts.ack_alert`,
    :func:`faithmon.model.alerts.acts_on`); the alert as it was when it may not."""
    alert = alert_for(session, alert_id, tenant)
    if alert is None or not acts_on(alert, tenant):
        return alert
    return ack_alert(session, alert_id, by, at)


def acknowledger(session: Session, key_id: int, prefix: str) -> str:
    """How an acknowledgement names the key that made it: the name it was created with
    (``faithmon keys create --name``), else its prefix; never the key."""
    row = session.get(ApiKeyRow, key_id)
    return row.name if row is not None and row.name.strip() else f"key fm_{prefix}"
