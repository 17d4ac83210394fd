"""``/`` (every segment against its baseline, the figures, the alerts) and ``/alerts``: the
report's own sections, rendered over the reader's tenant."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from html import escape

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from ...model import Alert, acts_on, segment_key
from ...model.segment_state import segment_state
from ...model.standing import NEVER_TRUSTED, ProofFloor
from ...report.html import render_alerts, render_charts, render_header
from ...report.sparkline import render_sparkline
from ...store import Sessions, evaluations, reads_alerts
from ...store import sentinels as store_sentinels
from ...store.report import ReportData, load_report
from ..keys import Grant
from ..v1 import ReadOptions
from ..v1.alerts import SHARED
from ..v1.segments import Segments, segments_view
from . import silences
from .segments import baseline_note, cause_cell, rate_cell, run_note, segment_link
from .shell import (
    HEADERS,
    MAX_NAME,
    form_fields,
    grant_of,
    keyed,
    name_given,
    not_found,
    page,
    remember_name,
    tenant_of,
    typed_name,
)


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
        # Named as `drift status` names it: an explained or folded detector is not "ok".
        state = segment_state(d.state for d in item.detectors)
        rows.append(
            f"<tr><td>{segment_link(item.segment)}</td>"
            f'<td><span class="badge {escape(state)}">{escape(state)}</span></td>'
            f"<td>{rate_cell(d.baseline_rate, d.baseline_interval)}</td>"
            f"<td>{rate_cell(d.current_rate, d.current_interval)}</td>{cause_cell(d)}"
            f"<td>{d.records}</td><td>{spark}</td></tr>"
        )
    if not rows:
        ready = "building its baseline" if not view.baseline_ready else "no segment yet"
        return f'<p class="muted">Drift: {ready}.</p>{baseline_note(view)}{run_note(view)}'
    head = "".join(
        f"<th>{h}</th>"
        for h in (
            "segment",
            "state",
            "baseline (95%)",
            "unsupported now (95%)",
            "by cause",
            "records",
            "",
        )
    )
    return (
        '<section class="card"><h2>Segments</h2><div class="table-wrap"><table id="segments">'
        f"<thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table></div>"
        '<p class="meta"><a href="/segments">Every detector, CUSUM and threshold</a></p>'
        f"{baseline_note(view)}{run_note(view)}</section>"
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
        lost = (
            "was never trusted by its sentinels"
            if since <= NEVER_TRUSTED
            else f"lost its sentinels' trust {since:%Y-%m-%d %H:%M} UTC"
        )
        return (
            f'<p class="error">Judge <code>{escape(judge)}</code> {lost} ({escape(reason)}): '
            f"its scores are held back from drift {runs}.</p>"
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


def _ack_form(alert_id: int, ask_name: bool) -> str:
    """The acknowledge button; with ``ask_name``, a field for the name of whoever presses it."""
    field = (
        f'<input name="by" placeholder="your name" aria-label="your name" '
        f'maxlength="{MAX_NAME}" required autofocus> '
        if ask_name
        else ""
    )
    return (
        f'<form class="inline ack" method="post" action="/alerts/{alert_id}/ack">'
        f"{field}<button>Acknowledge</button></form>"
    )


def _ack_offer(request: Request) -> Callable[[Alert], str]:
    """What the alerts page offers per alert: the acknowledge button for an open alert the
    caller may act on (a key with the review scope, or the open door), else nothing."""
    grant = grant_of(request)
    may = grant is None or grant.allows("review")
    tenant = tenant_of(request)

    def offer(alert: Alert) -> str:
        if not may or alert.state == "resolved" or alert.id is None or not acts_on(alert, tenant):
            return ""
        return _ack_form(alert.id, ask_name=False)

    return offer


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
        offer = _ack_offer(request)
        # Before drift has a baseline, on-call reads here what watches until then.
        view = await run_in_threadpool(segments_view, sessions, options, None, tenant_of(request))
        body = (
            "<h1>Alerts</h1>"
            + baseline_note(view)
            + muting
            + render_alerts(data, link_traces=True, act=offer)
        )
        return page(request, "Alerts", body, here="/alerts")

    def _ack(alert_id: int, tenant: str | None, grant: Grant | None, typed: str) -> Alert | None:
        """The alert after the caller acknowledged it (as it was, if the caller may not
        act on it: ``model.acts_on``); None when the caller has no such alert. A key is
        named by its name; the open door by the name typed."""
        with sessions.begin() as session:
            by = (
                reads_alerts.acknowledger(session, grant.key_id, grant.prefix)
                if grant is not None
                else typed
            )
            return reads_alerts.ack_for(session, alert_id, by, datetime.now(UTC), tenant)

    async def ack(request: Request) -> Response:
        alert_id = request.path_params["alert_id"]
        fields = await form_fields(request)
        grant = keyed(request)
        typed = typed_name((fields or {}).get("by", ""))
        if grant is None and not typed and not name_given(request):
            # No key names the caller (an open server): the name is asked once, then kept.
            body = (
                f"<h1>Who acknowledges alert #{alert_id}?</h1>"
                '<p class="muted">This server asks for no key, so it cannot tell who you are. '
                "The name is kept in this browser for the next alert.</p>"
                + _ack_form(alert_id, ask_name=True)
            )
            return page(request, "Acknowledge", body, status=422, refresh=False)
        typed = typed or name_given(request)
        tenant = tenant_of(request)
        alert = await run_in_threadpool(_ack, alert_id, tenant, grant, typed)
        if alert is None:
            return not_found(request, "No such alert.")
        if not acts_on(alert, tenant):
            body = f'<h1>Not yours to acknowledge</h1><p class="muted">{escape(SHARED)}.</p>'
            return page(request, "Forbidden", body, status=403, refresh=False)
        done = RedirectResponse(f"/alerts#alert-{alert_id}", status_code=303, headers=HEADERS)
        if typed and grant is None:
            remember_name(done, typed)
        return done

    return [
        Route("/", overview, methods=["GET"]),
        Route("/alerts", alerts, methods=["GET"]),
        Route("/alerts/{alert_id:int}/ack", ack, methods=["POST"]),
    ]
