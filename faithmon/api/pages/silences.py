"""The alerts page's silences: a "mute this segment for 2 h" button per open alert, the
silences that run or are still to come with a button that ends each, and the two form
posts behind them (``review`` scope, as the guard asks of every change; the session
cookie is SameSite=Strict and the CSP allows forms to this origin only, as for ack)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from html import escape

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from ...alerts.silencing import make_silence, segment_matchers
from ...model import Alert, segment_name, visible_to
from ...model.silences import Silence
from ...store import Sessions
from ...store import alerts as store_alerts
from ...store import silences as store_silences
from .shell import HEADERS, grant_of, not_found, page, tenant_of

MUTE_FOR = timedelta(hours=2)


def _who(request: Request) -> str:
    grant = grant_of(request)
    return f"key fm_{grant.prefix}" if grant is not None and grant.key_id else "dashboard"


def _button(action: str, label: str) -> str:
    return (
        f'<form class="inline" method="post" action="{escape(action)}">'
        f"<button>{escape(label)}</button></form>"
    )


def _mute_rows(alerts: Sequence[Alert]) -> str:
    rows = "".join(
        f"<tr><td>#{a.id}</td><td>{escape(a.rule)}</td><td>{escape(a.state)}</td>"
        f"<td>{escape(segment_name(a.segment))}</td>"
        f"<td>{_button(f'/alerts/{a.id}/mute', 'Mute this segment for 2 h')}</td></tr>"
        for a in alerts
        if a.state != "resolved" and a.id is not None
    )
    if not rows:
        return ""
    return (
        '<div class="table-wrap"><table id="mute"><thead><tr><th>#</th><th>rule</th>'
        "<th>state</th><th>segment</th><th></th></tr></thead>"
        f"<tbody>{rows}</tbody></table></div>"
    )


def _silence_rows(silences: Sequence[Silence], now: datetime) -> str:
    if not silences:
        return '<p class="muted">No silence is active or pending.</p>'
    rows = "".join(
        f'<tr id="silence-{s.id}"><td>#{s.id}</td><td>{escape(s.state(now))}</td>'
        f"<td><code>{escape(', '.join(s.matchers))}</code></td>"
        f"<td>{s.starts_at:%Y-%m-%d %H:%M}</td><td>{s.ends_at:%Y-%m-%d %H:%M}</td>"
        f"<td>{escape(s.created_by)}</td><td>{escape(s.comment)}</td>"
        f"<td>{_button(f'/silences/{s.id}/expire', 'Expire')}</td></tr>"
        for s in silences
    )
    head = "".join(
        f"<th>{h}</th>"
        for h in ("#", "state", "matchers", "starts (UTC)", "ends (UTC)", "by", "comment", "")
    )
    return (
        f'<div class="table-wrap"><table id="silences"><thead><tr>{head}</tr></thead>'
        f"<tbody>{rows}</tbody></table></div>"
    )


def section(sessions: Sessions, tenant: str | None, alerts: Sequence[Alert]) -> str:
    """The silences card of the alerts page, over what ``tenant`` may see."""
    now = datetime.now(UTC)
    with sessions() as session:
        running = store_silences.list_silences(session, now, 50, tenant=tenant)
    return (
        '<section class="card" id="silences-card"><h2>Silences</h2>'
        '<p class="meta">A silenced alert still changes state and is stored; only its '
        "notifications stop. When the silence ends, an alert still firing notifies once.</p>"
        f"{_silence_rows(running, now)}{_mute_rows(alerts)}</section>"
    )


def routes(sessions: Sessions) -> list[Route]:
    def _mute(alert_id: int, tenant: str | None, by: str) -> Silence | str | None:
        now = datetime.now(UTC)
        with sessions.begin() as session:
            alert = store_alerts.get_alert(session, alert_id)
            if alert is None or not visible_to(alert, tenant):
                return None
            try:
                made = make_silence(
                    segment_matchers(alert),
                    MUTE_FOR,
                    f"muted from the dashboard (alert #{alert_id})",
                    by,
                    now,
                    tenant=tenant,
                )
            except ValueError as exc:
                return str(exc)
            return store_silences.add_silence(session, made)

    async def mute(request: Request) -> Response:
        try:
            alert_id = int(request.path_params["alert_id"])
        except ValueError:
            return not_found(request, "No such alert.")
        made = await run_in_threadpool(_mute, alert_id, tenant_of(request), _who(request))
        if made is None:
            return not_found(request, "No such alert.")
        if isinstance(made, str):
            body = f'<h1>Not muted</h1><p class="error">{escape(made)}</p>'
            return page(request, "Not muted", body, status=422, refresh=False)
        return RedirectResponse(f"/alerts#silence-{made.id}", status_code=303, headers=HEADERS)

    def _expire(silence_id: int, tenant: str | None) -> bool:
        with sessions.begin() as session:
            found = store_silences.expire_silence(session, silence_id, datetime.now(UTC), tenant)
        return found is not None

    async def expire(request: Request) -> Response:
        try:
            silence_id = int(request.path_params["silence_id"])
        except ValueError:
            return not_found(request, "No such silence.")
        if not await run_in_threadpool(_expire, silence_id, tenant_of(request)):
            return not_found(request, "No such silence.")
        return RedirectResponse("/alerts#silences-card", status_code=303, headers=HEADERS)

    return [
        Route("/alerts/{alert_id:int}/mute", mute, methods=["POST"]),
        Route("/silences/{silence_id:int}/expire", expire, methods=["POST"]),
    ]
