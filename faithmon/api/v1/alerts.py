"""``/api/v1/alerts``: alerts newest first, one alert with its evidence, and acknowledging
one (recorded on it with the key that did; the detector still decides its state)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, HTTPException, Path, Query, Request
from pydantic import BaseModel, Field

from ...alerts import describe, to_json
from ...model import Alert, acts_on
from ...model.alerts import acknowledgement
from ...store import Sessions, reads_alerts
from ..keys import Grant
from ._common import (
    MAX_ID,
    MAX_PAGE,
    NOT_FOUND,
    Caller,
    Page,
    Text,
    caller,
    encode_cursor,
    id_cursor,
    not_found,
)
from .segments import SEGMENT_HELP, name_of

SHARED = "a key bound to a tenant cannot acknowledge an alert every tenant shares"

AlertId = Annotated[int, Path(ge=1, lt=MAX_ID)]


class AlertOut(BaseModel):
    id: int
    rule: str = Field(
        description="faithfulness_drift, critical_drift, citation_drift, retrieval_drift, "
        "policy_violation, no_data, judge_drift, ..."
    )
    segment: str = Field(description=SEGMENT_HELP)
    labels: dict[str, str]
    state: Literal["pending", "firing", "resolved"]
    severity: str
    summary: str = Field(description="One line for people.")
    opened_at: datetime
    updated_at: datetime
    resolved_at: datetime | None
    notified_at: datetime | None
    acked_by: str | None = Field(
        description="Who acknowledged it: the key's name (else its prefix), or null."
    )
    acked_at: datetime | None
    details: dict[str, Any] = Field(
        description="Baseline and current rates with intervals, sample size, change point, "
        "example traces with their unsupported claims, the judge's sentinel status."
    )


def alert_out(alert: Alert) -> AlertOut:
    assert alert.id is not None  # stored alerts have ids
    taken = acknowledgement(alert)
    details = to_json(alert)["details"]
    return AlertOut(
        id=alert.id,
        rule=alert.rule,
        segment=name_of(alert.segment),
        labels=dict(alert.segment),
        state=alert.state,
        severity=alert.severity,
        summary=describe(alert),
        opened_at=alert.opened_at,
        updated_at=alert.updated_at,
        resolved_at=alert.resolved_at,
        notified_at=alert.notified_at,
        acked_by=taken.by if taken is not None else None,
        acked_at=taken.at if taken is not None else None,
        details=details if isinstance(details, dict) else {},
    )


def router(sessions: Sessions) -> APIRouter:
    api = APIRouter(tags=["alerts"])

    @api.get("/alerts", response_model=Page[AlertOut])
    def list_alerts(
        who: Annotated[Caller, Depends(caller)],
        state: Literal["pending", "firing", "resolved"] | None = None,
        rule: Annotated[Text | None, Query(max_length=100)] = None,
        limit: Annotated[int, Query(ge=1, le=MAX_PAGE)] = 50,
        cursor: Annotated[Text | None, Query(max_length=200)] = None,
    ) -> Page[AlertOut]:
        """Alerts newest first (a tenant's key sees those of its tenant's segments)."""
        before = id_cursor(cursor)
        with sessions() as session:
            page = reads_alerts.alert_page(session, limit, before, who.tenant, state, rule)
        return Page[AlertOut](
            items=[alert_out(a) for a in page.items],
            next_cursor=encode_cursor(page.next) if page.next is not None else None,
        )

    @api.get("/alerts/{alert_id}", response_model=AlertOut, responses=NOT_FOUND)
    def show_alert(who: Annotated[Caller, Depends(caller)], alert_id: AlertId) -> AlertOut:
        """One alert with everything it carries."""
        with sessions() as session:
            alert = reads_alerts.alert_for(session, alert_id, who.tenant)
        if alert is None:
            raise not_found("such alert")
        return alert_out(alert)

    @api.post("/alerts/{alert_id}/ack", response_model=AlertOut, responses=NOT_FOUND)
    def ack_alert(
        request: Request, who: Annotated[Caller, Depends(caller)], alert_id: AlertId
    ) -> AlertOut:
        """Acknowledge an alert: records who (the key's name, else its prefix) and when
        (`acked_by`, `acked_at`; the first acknowledgement stays); needs `review`."""
        grant = getattr(request.state, "grant", None)
        with sessions.begin() as session:
            by = (
                reads_alerts.acknowledger(session, grant.key_id, grant.prefix)
                if isinstance(grant, Grant) and grant.key_id
                else who.who
            )
            alert = reads_alerts.ack_for(session, alert_id, by, datetime.now(UTC), who.tenant)
        if alert is None:
            raise not_found("such alert")
        if not acts_on(alert, who.tenant):
            raise HTTPException(status_code=403, detail=SHARED)
        return alert_out(alert)

    return api
