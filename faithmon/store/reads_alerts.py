"""Alerts as the read API pages through them: newest first, by state and rule, and for a
tenant-bound reader only those ``model.visible_to`` it (its tenant's, and the judge's)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import or_, select
from sqlalchemy.orm import Session

from ..model import JUDGE_RULES, Alert, acts_on, visible_to
from .alerts import ack_alert, to_alert
from .tables import AlertRow


@dataclass(frozen=True, slots=True)
class AlertPage:
    items: tuple[Alert, ...]
    next: int | None
    """The id the next page starts below, if there is one."""


def alert_page(
    session: Session,
    limit: int,
    before: int | None = None,
    tenant: str | None = None,
    state: str | None = None,
    rule: str | None = None,
) -> AlertPage:
    query = select(AlertRow).order_by(AlertRow.id.desc()).limit(limit + 1)
    if before is not None:
        query = query.where(AlertRow.id < before)
    if tenant is not None:
        query = query.where(
            or_(AlertRow.segment["tenant"].as_string() == tenant, AlertRow.rule.in_(JUDGE_RULES))
        )
    if state is not None:
        query = query.where(AlertRow.state == state)
    if rule is not None:
        query = query.where(AlertRow.rule == rule)
    rows = list(session.scalars(query))
    items = tuple(to_alert(row) for row in rows[:limit])
    return AlertPage(items, rows[limit - 1].id if len(rows) > limit else None)


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
