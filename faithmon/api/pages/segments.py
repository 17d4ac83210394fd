"""``/segments`` (every drift detector: baseline against the current rate with their
intervals, CUSUM against its threshold, state) and ``/segments/{segment}`` (its rate over
time on the baseline band, with alert markers, and its worst traces)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta
from html import escape
from urllib.parse import quote

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from ...model import cause_words, segment_key
from ...report.chart import Band, Counts, Marker, render_chart
from ...report.html import LEGEND, alert_markers
from ...store import Sessions, reads_alerts
from ...store.reads_traces import TraceFilter, TracePage, list_traces
from ...store.report import load_report
from ..v1 import ReadOptions
from ..v1.segments import Detector, Segments, SeriesOut, segments_view, series_view
from .shell import not_found, page, tenant_of


def _pct(rate: float) -> str:
    return f"{rate:.1%}"


def rate_cell(rate: float, interval: list[float]) -> str:
    return (
        f'<span class="val">{_pct(rate)}</span> '
        f'<span class="interval">({_pct(interval[0])}–{_pct(interval[1])})</span>'
    )


def cause_cell(d: Detector) -> str:
    """The points of the rate each cause accounts for: which half of the pipeline to fix."""
    return f'<td class="causes">{escape(cause_words(d.causes))}</td>'


def _detector_cells(d: Detector) -> str:
    return (
        f"<td>{escape(d.stream)}</td>"
        f"<td>{rate_cell(d.baseline_rate, d.baseline_interval)}</td>"
        f"<td>{rate_cell(d.current_rate, d.current_interval)}</td>{cause_cell(d)}"
        f"<td>{d.records}</td>"
        f"<td>{d.cusum:.2f} / {d.threshold:.2f}</td>"
        f'<td><span class="badge {escape(d.state)}">{escape(d.state)}</span>'
        + (f" by {escape(d.explained_by)}" if d.explained_by else "")
        + "</td>"
    )


def segment_link(name: str) -> str:
    return f'<a href="/segments/{quote(name, safe="=,")}">{escape(name)}</a>'


def baseline_note(view: Segments) -> str:
    """When detection starts: each partition whose baseline builds, how far it has come,
    and the ceiling that applies until then."""
    lines = [
        f"<li>{escape(b.segment if b.segment != 'overall' else 'all records')}: "
        f"{escape(b.line)}</li>"
        for b in view.building
    ]
    if not lines:
        return ""
    return (
        '<div class="muted baseline-note"><p>Drift detection starts once a baseline is'
        f" frozen.</p><ul>{''.join(lines)}</ul></div>"
    )


def run_note(view: Segments) -> str:
    """When the drift shown was read: the worker computes it, a page never does."""
    if view.computed_at is None:
        return (
            '<p class="muted">No drift run yet: <code>faithmon worker</code> runs drift '
            "every FAITHMON_DRIFT_INTERVAL.</p>"
        )
    when = f"{view.computed_at:%Y-%m-%d %H:%M} UTC"
    if view.stale:
        return (
            f'<p class="muted">Drift as of {when}: records were scored since and no worker '
            "has run drift; is <code>faithmon worker</code> running?</p>"
        )
    return f'<p class="muted">Drift as of {when}.</p>'


def routes(sessions: Sessions, options: ReadOptions) -> list[Route]:
    async def index(request: Request) -> Response:
        view = await run_in_threadpool(segments_view, sessions, options, None, tenant_of(request))
        rows = []
        for item in view.items:
            for n, d in enumerate(item.detectors):
                name = segment_link(item.segment) if n == 0 else ""
                rows.append(f"<tr><td>{name}</td>{_detector_cells(d)}</tr>")
        head = "".join(
            f"<th>{h}</th>"
            for h in (
                "segment",
                "stream",
                "baseline (95%)",
                "current (95%)",
                "by cause",
                "records",
                "CUSUM / threshold",
                "state",
            )
        )
        ready = baseline_note(view)
        if not ready and not view.baseline_ready:
            ready = '<p class="muted">The baseline is still being built.</p>'
        table = (
            f'<div class="table-wrap card"><table><thead><tr>{head}</tr></thead><tbody>'
            f"{''.join(rows)}</tbody></table></div>"
            if rows
            # Before any baseline there are scored records but no detector to show.
            else ""
            if view.building
            else '<p class="muted">No segment has scored records yet.</p>'
        )
        body = f"<h1>Segments</h1>{run_note(view)}{ready}{table}"
        return page(request, "Segments", body, here="/segments")

    def _detail(
        name: str, tenant: str | None
    ) -> tuple[SeriesOut, Sequence[Counts], timedelta, list[Marker], TracePage] | None:
        # Whether the reader may see the segment, and the baseline its detector reads.
        series = series_view(sessions, options, name, "day", None, None, None, tenant)
        if series is None:
            return None
        with sessions() as session:
            # Counted as the overview counts it: the same bucket width over the same span,
            # so a point here is the point there.
            report = load_report(
                session, series.judge, tenant=tenant, counted_segments=[series.labels]
            )
            # The segment's own, looked up by its key: never every alert of the store.
            alerts = list(reads_alerts.shown_alerts(session, tenant, series.labels))
            worst = list_traces(
                session,
                TraceFilter(tenant=tenant, labels=series.labels, unsupported=True),
                20,
            )
        buckets = report.sparklines.get(segment_key(series.labels), ())
        return series, buckets, report.bucket, alert_markers(alerts), worst

    async def detail(request: Request) -> Response:
        name = request.path_params["segment"]
        found = await run_in_threadpool(_detail, name, tenant_of(request))
        if found is None:
            return not_found(request, "No such segment.")
        series, buckets, width, markers, worst = found
        band = None
        baseline = series.baseline
        if baseline is not None:
            band = Band(rate=baseline.rate, low=baseline.interval[0], high=baseline.interval[1])
        chart = render_chart(
            "segment-chart", f"Unsupported rate over time, {name}", buckets, width, band, markers
        )
        rows = "".join(
            f'<tr><td><a href="/traces/{quote(t.trace_id, safe="")}"><code>'
            f"{escape(t.trace_id[:12])}</code></a></td><td>{t.started_at:%Y-%m-%d %H:%M}</td>"
            f"<td>{'—' if t.faithfulness is None else f'{t.faithfulness:.2f}'}</td>"
            f"<td>{'yes' if t.critical else ''}</td><td>{escape(t.question[:160])}</td></tr>"
            for t in worst.items
        )
        traces = (
            '<section class="card"><h2>Unsupported answers, newest first</h2><table><thead>'
            "<tr><th>trace</th><th>started</th><th>strict</th><th>critical</th><th>question"
            f"</th></tr></thead><tbody>{rows}</tbody></table></section>"
            if rows
            else ""
        )
        body = (
            f'<h1>Segment {escape(name)}</h1><section class="card">{LEGEND}{chart}</section>'
            f"{traces}"
        )
        return page(request, f"Segment {name}", body, here="/segments")

    return [
        Route("/segments", index, methods=["GET"]),
        Route("/segments/{segment:path}", detail, methods=["GET"]),
    ]
