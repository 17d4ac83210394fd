"""``/traces/{trace_id}``: the claims highlighted in the answer and on the chunks they cite
(a wrong citation linked to the chunk it names), the policy findings, and every
evaluation of the trace with its judge, scores and citation accuracy."""

from __future__ import annotations

from html import escape

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from ...model import Judgement, StoredRecord
from ...model.records import kept_because
from ...report.traces import render_example
from ...store import Sessions
from ...store.stored_records import load_traces
from .shell import not_found, page, tenant_of


def _score(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f}"


def _citations(j: Judgement) -> str:
    unresolved = f" · {j.unresolved_citations} unresolved" if j.unresolved_citations else ""
    return f"{_score(j.citation_accuracy)}{unresolved}"


def _relevance(j: Judgement) -> str:
    """The relevance cells: context, answer, then cause or abstention (escaped, as a
    stored value is text a judge wrote)."""
    r = j.relevance
    if r is None:
        return "<td>—</td><td>—</td><td>—</td>"
    why = r.cause or (f"abstention {r.abstention}" if r.abstention else "—")
    return (
        f"<td>{_score(r.context_relevance)}</td><td>{_score(r.answer_relevance)}</td>"
        f"<td>{escape(why)}</td>"
    )


def _evaluations(stored: StoredRecord) -> str:
    rows = "".join(
        f"<tr><td><code>{escape(j.judge)}</code></td><td>{escape(j.status)}</td>"
        f"<td>{_score(j.faithfulness)}</td><td>{_score(j.lenient)}</td>{_relevance(j)}"
        f"<td>{len(j.claims)}</td><td>{_citations(j)}</td><td>{len(j.policy)}</td>"
        f"<td>{j.usage.calls}</td>"
        f"<td>{j.usage.prompt_tokens + j.usage.completion_tokens}</td>"
        f"<td>{escape(j.error or '')}</td></tr>"
        for j in stored.evaluations
    )
    head = "".join(
        f"<th>{h}</th>"
        for h in (
            "judge",
            "status",
            "strict",
            "lenient",
            "context relevance",
            "answer relevance",
            "cause",
            "claims",
            "citation accuracy",
            "policy findings",
            "calls",
            "tokens",
            "error",
        )
    )
    return (
        '<section class="card"><h2>Evaluations</h2><div class="table-wrap"><table>'
        f"<thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table></div></section>"
        if rows
        else '<p class="muted">Not scored yet.</p>'
    )


def routes(sessions: Sessions) -> list[Route]:
    def _load(trace_id: str) -> StoredRecord | None:
        with sessions() as session:
            return load_traces(session, [trace_id]).get(trace_id)

    async def show(request: Request) -> Response:
        trace_id = request.path_params["trace_id"]
        stored = await run_in_threadpool(_load, trace_id)
        tenant = tenant_of(request)
        # Another tenant's trace is as absent as one never stored: 404, never 403.
        if stored is None or (tenant is not None and stored.record.labels.get("tenant") != tenant):
            return not_found(request, "No trace with that id.")
        judge = stored.evaluations[-1].judge if stored.evaluations else ""
        record = stored.record
        facts = (
            f'<p class="meta">status {escape(stored.status)} · '
            f"{escape(kept_because(record.sample_reason))}</p>"
        )
        body = (
            f"<h1>Trace</h1>{facts}"
            f'<section class="card">{render_example(trace_id, stored, judge, ())}</section>'
            f"{_evaluations(stored)}"
        )
        return page(request, f"Trace {trace_id}", body, here="/traces", refresh=False)

    return [Route("/traces/{trace_id}", show, methods=["GET"])]
