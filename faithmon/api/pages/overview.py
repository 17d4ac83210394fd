"""``/`` (every segment against its baseline, the figures, the alerts) and ``/alerts``: the
report's own sections, rendered over the reader's tenant."""

from __future__ import annotations

from datetime import UTC, datetime
from html import escape

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from ...model import acts_on, segment_key, visible_to
from ...model.standing import ProofFloor
from ...report.html import render_alerts, render_charts, render_header
from ...report.sparkline import render_sparkline
from ...store import Sessions, evaluations
from ...store import alerts as store_alerts
from ...store import sentinels as store_sentinels
from ...store.report import ReportData, load_report
from ..v1 import ReadOptions
from ..v1.alerts import SHARED
from ..v1.segments import Segments, segments_view
from . import silences
from .segments import rate_cell, run_note, segment_link
from .shell import HEADERS, grant_of, not_found, page, tenant_of


def _load(
    sessions: Sessions, options: ReadOptions, tenant: str | None
) -> tuple[ReportData, Segments] | None:
    view = segments_view(sessions, options, None, tenant)
    with sessions() as session:
        judge = view.judge or options.judge or evaluations.latest_judge(session)
        if judge is None:
            return None
        data = load_report(
            session,
            judge,
            tenant=tenant,
            counted_segments=[s.labels for s in view.items],
            floor=options.proof_floor,
        )
    return data, view


def _segment_rows(data: ReportData, view: Segments) -> str:
    """Every segment the reader may see: its state, its unsupported rate against its
    baseline with their intervals, and a sparkline over the traces' span."""
    rows = []
    for item in view.items:
        d = next((d for d in item.detectors if d.stream == "unsupported"), item.detectors[0])
        buckets = data.sparklines.get(segment_key(item.labels), ())
        spark = (
            render_sparkline(item.segment, buckets, data.span, data.bucket, d.baseline_rate)
            if data.span is not None
            else ""
        )
        rows.append(
            f"<tr><td>{segment_link(item.segment)}</td>"
            f'<td><span class="badge {escape(item.state)}">{escape(item.state)}</span></td>'
            f"<td>{rate_cell(d.baseline_rate, d.baseline_interval)}</td>"
            f"<td>{rate_cell(d.current_rate, d.current_interval)}</td>"
            f"<td>{d.records}</td><td>{spark}</td></tr>"
        )
    if not rows:
        ready = "building its baseline" if not view.baseline_ready else "no segment yet"
        return f'<p class="muted">Drift: {ready}.</p>{run_note(view)}'
    head = "".join(
        f"<th>{h}</th>"
        for h in ("segment", "state", "baseline (95%)", "unsupported now (95%)", "records", "")
    )
    return (
        '<section class="card"><h2>Segments</h2><div class="table-wrap"><table id="segments">'
        f"<thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table></div>"
        '<p class="meta"><a href="/segments">Every detector, CUSUM and threshold</a></p>'
        f"{run_note(view)}</section>"
    )


def _trust(sessions: Sessions, judge: str, floor: ProofFloor) -> str:
    """Whether the scores shown can be believed: the judge's sentinel standing."""
    with sessions() as session:
        standing = store_sentinels.standing(session, judge, floor)
    runs = '(<a href="/sentinels">runs</a>)'
    if standing.state == "proven":
        return f"<p>Judge <code>{escape(judge)}</code>: trusted by its sentinels {runs}.</p>"
    if standing.state == "drifting" and standing.distrust is not None:
        since, _, reason = standing.distrust
        return (
            f'<p class="error">Judge <code>{escape(judge)}</code> lost its sentinels\' trust '
            f"{since:%Y-%m-%d %H:%M} UTC ({escape(reason)}): its scores are held "
            f"back from drift {runs}.</p>"
        )
    css = "" if standing.state == "untested" else ' class="error"'
    return f"<p{css}>{escape(standing.line)} {runs}.</p>"


_EMPTY = (
    '<p class="lede">No record has been scored yet. Send traces to this server '
    "(<code>POST /v1/traces</code>) and run <code>faithmon worker</code>.</p>"
)


def _alerts_of(sessions: Sessions, judge: str | None, tenant: str | None) -> ReportData | None:
    with sessions() as session:
        judge = judge or evaluations.latest_judge(session)
        return None if judge is None else load_report(session, judge, tenant=tenant)


def routes(sessions: Sessions, options: ReadOptions) -> list[Route]:
    async def overview(request: Request) -> Response:
        found = await run_in_threadpool(_load, sessions, options, tenant_of(request))
        if found is None:
            return page(request, "Overview", "<h1>faithmon</h1>" + _EMPTY, here="/")
        data, view = found
        firing = [a for a in data.alerts if a.state != "resolved"]
        alerts = (
            f'<p><a href="/alerts">{len(firing)} open alerts</a> · {len(data.alerts)} in all</p>'
        )
        trust = await run_in_threadpool(_trust, sessions, data.judge, options.proof_floor)
        body = (
            render_header(data, "Overview", standing=False)
            + trust
            + alerts
            + _segment_rows(data, view)
            + render_charts(data)
        )
        return page(request, "Overview", body, here="/")

    async def alerts(request: Request) -> Response:
        data = await run_in_threadpool(_alerts_of, sessions, options.judge, tenant_of(request))
        if data is None:
            return page(request, "Alerts", "<h1>Alerts</h1>" + _EMPTY, here="/alerts")
        muting = await run_in_threadpool(
            silences.section, sessions, tenant_of(request), data.alerts
        )
        body = "<h1>Alerts</h1>" + muting + render_alerts(data, link_traces=True)
        return page(request, "Alerts", body, here="/alerts")

    def _ack(alert_id: int, tenant: str | None, by: str) -> bool | None:
        """True when acknowledged, False when there is no such alert for the caller,
        None when the caller sees it but may not act on it (``model.acts_on``)."""
        with sessions.begin() as session:
            alert = store_alerts.get_alert(session, alert_id)
            if alert is None or not visible_to(alert, tenant):
                return False
            if not acts_on(alert, tenant):
                return None
            store_alerts.ack_alert(session, alert_id, by, datetime.now(UTC))
            return True

    async def ack(request: Request) -> Response:
        grant = grant_of(request)
        by = f"key fm_{grant.prefix}" if grant is not None and grant.key_id else "dashboard"
        try:
            alert_id = int(request.path_params["alert_id"])
        except ValueError:
            return not_found(request, "No such alert.")
        done = await run_in_threadpool(_ack, alert_id, tenant_of(request), by)
        if done is None:
            body = f'<h1>Not yours to acknowledge</h1><p class="muted">{escape(SHARED)}.</p>'
            return page(request, "Forbidden", body, status=403, refresh=False)
        if not done:
            return not_found(request, "No such alert.")
        return RedirectResponse(f"/alerts#alert-{alert_id}", status_code=303, headers=HEADERS)

    return [
        Route("/", overview, methods=["GET"]),
        Route("/alerts", alerts, methods=["GET"]),
        Route("/alerts/{alert_id}/ack", ack, methods=["POST"]),
    ]
