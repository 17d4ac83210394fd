"""``/traces`` (the API's filters, paged) and ``/documents`` (source documents, worst first):
the same queries as ``/api/v1/traces`` and ``/api/v1/documents``, as tables."""

from __future__ import annotations

from datetime import UTC, datetime
from html import escape
from typing import get_args
from urllib.parse import quote, urlencode

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from ...model import parse_label
from ...store import Sessions
from ...store.reads_traces import TraceFilter, TracePage, list_traces
from ..v1.documents import documents_page
from ..v1.traces import STATUS_HELP, Status
from .shell import page, tenant_of

PAGE_SIZE = 50
STATUSES = ("", *get_args(Status))
""""" is any status; the rest as the API takes them."""


def _score(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f}"


def _time(text: str) -> datetime | None:
    try:
        at = datetime.fromisoformat(text)
    except ValueError:
        return None
    return at if at.tzinfo else at.replace(tzinfo=UTC)


def _cursor(text: str) -> tuple[datetime, int] | None:
    at, _, record_id = text.partition("~")
    when = _time(at)
    return (when, int(record_id)) if when is not None and record_id.isdigit() else None


def _filters(request: Request) -> tuple[TraceFilter, dict[str, str], list[str]]:
    """The filter the form asks for; a value that cannot be read is named, not obeyed."""
    q = request.query_params
    shown = {k: q.get(k, "") for k in ("status", "label", "since", "until", "max_score")}
    shown["critical"] = "1" if q.get("critical") else ""
    problems = []
    labels: dict[str, str] = {}
    if shown["label"]:
        # The parser the API's and the CLI's label filters use, with the same name check.
        pair = parse_label(shown["label"])
        if pair is not None:
            labels[pair[0]] = pair[1]
        else:
            problems.append("label must be key=value")
    times = {}
    for key in ("since", "until"):
        times[key] = _time(shown[key]) if shown[key] else None
        if shown[key] and times[key] is None:
            problems.append(f"{key} must be an ISO-8601 time")
    max_score = None
    if shown["max_score"]:
        try:
            max_score = float(shown["max_score"])
        except ValueError:
            problems.append("max score must be a number")
    status = shown["status"] if shown["status"] in STATUSES else ""
    if shown["status"] != status:
        problems.append(f"status must be one of {STATUS_HELP}")
    where = TraceFilter(
        tenant=tenant_of(request),
        status=status or None,
        labels=labels,
        since=times["since"],
        until=times["until"],
        max_score=max_score,
        critical=True if shown["critical"] else None,
    )
    return where, shown, problems


def _form(shown: dict[str, str]) -> str:
    options = "".join(
        f'<option value="{s}"{" selected" if s == shown["status"] else ""}>{s or "any"}</option>'
        for s in STATUSES
    )

    def field(name: str, label: str, hint: str) -> str:
        return (
            f'<label>{label}<input name="{name}" value="{escape(shown[name])}" '
            f'placeholder="{hint}"></label>'
        )

    checked = " checked" if shown["critical"] else ""
    return (
        '<form class="filters card" method="get" action="/traces">'
        f'<label>status<select name="status">{options}</select></label>'
        + field("label", "label", "route=billing")
        + field("since", "since", "2026-01-01T00:00")
        + field("until", "until", "")
        + field("max_score", "max score", "0.99")
        + f'<label>critical<input type="checkbox" name="critical" value="1"{checked}></label>'
        "<button type=submit>Filter</button></form>"
    )


def routes(sessions: Sessions) -> list[Route]:
    async def traces(request: Request) -> Response:
        where, shown, problems = _filters(request)
        after = _cursor(request.query_params.get("after", ""))

        def load() -> TracePage:
            with sessions() as session:
                return list_traces(session, where, PAGE_SIZE, after)

        found = await run_in_threadpool(load)
        rows = "".join(
            f'<tr><td><a href="/traces/{quote(t.trace_id, safe="")}"><code>'
            f"{escape(t.trace_id[:12])}</code></a></td>"
            f"<td>{t.started_at:%Y-%m-%d %H:%M:%S}</td><td>{escape(t.status)}</td>"
            f"<td>{_score(t.faithfulness)}</td><td>{_score(t.lenient)}</td>"
            f"<td>{'yes' if t.critical else ''}</td>"
            f"<td>{escape(', '.join(f'{k}={v}' for k, v in sorted(t.labels.items())))}</td>"
            f"<td>{escape(t.question[:160])}</td></tr>"
            for t in found.items
        )
        head = "".join(
            f"<th>{h}</th>"
            for h in ("trace", "started", "status", "strict", "lenient", "critical", "labels")
        )
        more = ""
        if found.next is not None:
            at, record_id = found.next
            params = {k: v for k, v in shown.items() if v}
            params["after"] = f"{at.isoformat()}~{record_id}"
            more = f'<p class="pager"><a href="/traces?{escape(urlencode(params))}">Older</a></p>'
        notes = "".join(f'<p class="error">{escape(p)}</p>' for p in problems)
        table = (
            f'<div class="table-wrap card"><table><thead><tr>{head}<th>question</th></tr></thead>'
            f"<tbody>{rows}</tbody></table></div>{more}"
            if rows
            else '<p class="muted">No trace matches.</p>'
        )
        body = f"<h1>Traces</h1>{_form(shown)}{notes}{table}"
        return page(request, "Traces", body, here="/traces", refresh=False)

    async def documents(request: Request) -> Response:
        tenant = tenant_of(request)
        found = await run_in_threadpool(
            documents_page, sessions, tenant, None, None, None, PAGE_SIZE, None
        )
        rows = []
        for d in found.items:
            share = "—" if d.unsupported_share is None else f"{d.unsupported_share:.0%}"
            interval = (
                f" ({d.unsupported_interval[0]:.0%}–{d.unsupported_interval[1]:.0%})"
                if d.unsupported_interval
                else ""
            )
            claims = "".join(
                f'<li><a href="/traces/{quote(c.trace_id, safe="")}">{escape(c.text)}</a></li>'
                for c in d.contradicted_claims
            )
            rows.append(
                f"<tr><td><code>{escape(d.id)}</code></td><td>{d.passed}</td>"
                f"<td>{share}<span class=interval>{interval}</span></td>"
                f"<td>{d.contradicted}</td><td><ul>{claims}</ul></td></tr>"
            )
        head = "".join(
            f"<th>{h}</th>"
            for h in ("document", "passed", "answers unsupported (95%)", "contradicted", "claims")
        )
        table = (
            f'<div class="table-wrap card"><table><thead><tr>{head}</tr></thead><tbody>'
            f"{''.join(rows)}</tbody></table></div>"
            if rows
            else '<p class="muted">No document ids were passed to the generator yet.</p>'
        )
        lede = (
            '<p class="lede">Each source document the retriever passed to the generator, worst '
            "first: how often, the share of those answers with an unsupported claim, and the "
            "claims that contradicted it. Fix these in the knowledge base.</p>"
        )
        return page(request, "Documents", f"<h1>Documents</h1>{lede}{table}", here="/documents")

    return [
        Route("/traces", traces, methods=["GET"]),
        Route("/documents", documents, methods=["GET"]),
    ]
