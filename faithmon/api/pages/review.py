"""``/review``: a reviewer's desk, driven from the keyboard. The page shows the leased item
(the question, the chunks as the generator saw them, the answer, and each claim with the
judge's verdict and quote); ``review.js`` gives each verdict a key. It works without the
script too: one radio group per claim, a submit button, a skip button.

Leasing, labelling and skipping are form posts (``review`` scope, as the guard asks of
every change; the session cookie is SameSite=Strict and the CSP allows forms to this
origin only, as for the silences) through the same calls as ``/api/v1/review``, so the
page and the API refuse alike. Every value of a trace goes through ``html.escape``.

Labels name their reviewer: the key's name (else its prefix). On an open server no key
names anyone, so the desk asks a name once, kept in the browser as the alerts page
keeps an acknowledger's (``shell.NAME_COOKIE``).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from html import escape
from urllib.parse import parse_qs, quote

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from ...model.review import LABELS, ClaimLabel, ReviewClaim, ReviewItem
from ...store import Sessions
from ...store import review as store_review
from ..v1._common import caller
from ..v1.review import (
    Leased,
    Refusal,
    find_item,
    key_name,
    label_item,
    next_item,
    skip_item,
)
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
    typed_name,
)

ASSETS = ("review.css", "review.js")
KEYS = {
    "supported": "s",
    "unsupported": "u",
    "contradicted": "c",
    "not_verifiable": "n",
    "partial": "p",
}
SHOWN = 20
"""Items listed on the desk (the count goes up to ``COUNTED``)."""
COUNTED = 500
MAX_FORM_BYTES = 65536
MAX_NOTE = 2000

Chosen = Mapping[int, tuple[str, bool]]
"""Claim index → (verdict, critical), as a refused form had them."""


def _href(trace_id: str) -> str:
    return "/review/" + quote(trace_id, safe="")


def _keys_help() -> str:
    keys = "".join(
        f"<li><kbd>{key}</kbd> {escape(label.replace('_', ' '))}</li>"
        for label, key in KEYS.items()
    )
    return (
        f'<ul class="keys">{keys}<li><kbd>x</kbd> critical</li>'
        "<li><kbd>j</kbd>/<kbd>k</kbd> or <kbd>↓</kbd>/<kbd>↑</kbd> next or previous claim</li>"
        "<li><kbd>Enter</kbd> submit and load the next item</li><li><kbd>Esc</kbd> skip</li></ul>"
    )


def _start(label: str, name: str | None = None) -> str:
    """The form that leases the next item; with ``name`` (an open server: "" until one is
    given), the field that says who reviews."""
    if name is None:
        return (
            '<form id="start" class="inline" method="post" action="/review/next">'
            f"<button autofocus>{escape(label)}</button></form>"
        )
    return (
        '<form id="start" class="inline" method="post" action="/review/next">'
        '<label for="reviewer">Your name</label> '
        f'<input id="reviewer" name="by" required maxlength="{MAX_NAME}" autocomplete="name" '
        f'value="{escape(name)}"{"" if name else " autofocus"}> '
        f"<button{' autofocus' if name else ''}>{escape(label)}</button>"
        '<p class="meta">This server asks for no key, so it cannot tell who you are: your '
        "labels are recorded under this name, kept in this browser.</p></form>"
    )


def _desk(items: list[ReviewItem], can_label: bool, said: str, name: str | None) -> str:
    rows = "".join(
        f'<tr><td><a href="{_href(i.trace_id)}"><code>{escape(i.trace_id)}</code></a>'
        f"</td><td>{escape(i.reason)}</td><td>{len(i.claims)}</td>"
        f"<td>{i.reviews_done}/{i.reviews_wanted}</td><td><code>{escape(i.judge)}</code></td></tr>"
        for i in items[:SHOWN]
    )
    count = f"{len(items)}{'+' if len(items) >= COUNTED else ''}"
    table = (
        '<div class="table-wrap"><table id="queue"><thead><tr><th>trace</th><th>reason</th>'
        f"<th>claims</th><th>reviews</th><th>judge</th></tr></thead><tbody>{rows}</tbody>"
        "</table></div>"
        if rows
        else '<p class="muted">The review queue is empty.</p>'
    )
    action = (
        _start("Start reviewing (Enter)", name)
        if can_label and items
        else '<form class="inline"><button disabled>Start reviewing</button></form>'
        if can_label
        else '<p class="error">This key lacks the review scope: it can read the queue, '
        "not label it.</p>"
    )
    return (
        "<h1>Review</h1>"
        '<p class="lede">Label each claim the judge found against the chunks the generator '
        "saw: the labels measure the judge and calibrate its thresholds.</p>"
        f"{said}"
        f'<section class="card"><h2>Queue</h2><p class="meta">{count} open items, most urgent '
        f"first.</p>{action}{table}</section>"
        f'<section class="card"><h2>Keys</h2>{_keys_help()}</section>'
    )


def _chunks(leased: Leased) -> str:
    record = leased.record
    if record is None or not record.chunks:
        return '<p class="muted">No chunks.</p>'
    items = "".join(
        f'<li id="chunk-{n}"><span class="chunk-head">[{n + 1}]'
        f"{' · ' + escape(c.id) if c.id else ''}</span>"
        f'<p class="chunk-text">{escape(c.text)}</p></li>'
        for n, c in enumerate(record.chunks)
    )
    return f'<ol class="chunks">{items}</ol>'


def _claim(c: ReviewClaim, chosen: Chosen) -> str:
    picked, critical = chosen.get(c.index, ("", False))
    radios = "".join(
        f'<label><input type="radio" name="verdict-{c.index}" value="{label}" required'
        f"{' checked' if picked == label else ''}> {escape(label.replace('_', ' '))} "
        f"<kbd>{key}</kbd></label>"
        for label, key in KEYS.items()
    )
    # Chunks are numbered from 1, as the answer's markers and the trace page number them.
    cited = f" · chunk [{c.chunk + 1}]" if c.chunk is not None else ""
    quote_text = f' · quote: <q class="quote">{escape(c.quote)}</q>' if c.quote else ""
    rule = f" ({escape(c.critical_rule)})" if c.critical_rule else ""
    judged_critical = f' · <span class="flag">critical{rule}</span>' if c.critical else ""
    why = f' · reason: <span class="rationale">{escape(c.rationale)}</span>' if c.rationale else ""
    if c.missing:
        why += f' · missing: <span class="missing">{escape(c.missing)}</span>'
    if c.citation in ("wrong", "unresolved"):
        named = ", ".join(f"[{i + 1}]" for i in c.citations) or "no chunk it was given"
        why += f' · <span class="flag">cites {named}: {escape(c.citation)}</span>'
    elif c.citation == "correct":
        why += " · cites " + ", ".join(f"[{i + 1}]" for i in c.citations)
    return (
        f'<fieldset class="claim" id="claim-{c.index}" data-index="{c.index}">'
        f'<legend>[{c.index}] <span class="claim-text">{escape(c.text)}</span></legend>'
        f'<p class="meta">judge: <span class="verdict {escape(c.verdict)}">'
        f"{escape(c.verdict)}</span>{judged_critical}{cited}{quote_text}{why}</p>"
        f'<div class="choices">{radios}<label><input type="checkbox" name="critical-{c.index}" '
        f'value="1"{" checked" if critical else ""}> critical <kbd>x</kbd></label></div>'
        "</fieldset>"
    )


def _item(leased: Leased, reviewer: str, problem: str, chosen: Chosen, said: str) -> str:
    item, record = leased.item, leased.record
    trace = quote(item.trace_id, safe="")
    held = ""
    if item.lease_owner and item.lease_expires and item.lease_expires > datetime.now(UTC):
        held = f" · leased by {escape(item.lease_owner)} until {item.lease_expires:%H:%M} UTC"
    facts = (
        f'<p class="meta">trace <a href="/traces/{trace}"><code>{escape(item.trace_id)}</code>'
        f"</a> · {escape(item.reason)} · judge <code>{escape(item.judge)}</code> · "
        f"{item.reviews_done}/{item.reviews_wanted} reviews{held}</p>"
    )
    error = f'<p class="error" role="alert">{escape(problem)}</p>' if problem else ""
    refusal = _unlabellable(item, reviewer)
    if refusal:
        form = f'<section class="card"><p class="error">{escape(refusal)}</p>'
        form += f"{_start('Next item')}</section>"
    else:
        claims = "".join(_claim(c, chosen) for c in item.claims)
        form = (
            f'<form id="labels" class="card review" method="post" action="/review/{trace}/labels">'
            f"<h2>Claims</h2>{claims}"
            f'<label for="note">Note</label><textarea id="note" name="note" rows="2" '
            f'maxlength="{MAX_NOTE}"></textarea>'
            '<p id="review-status" class="meta" role="status"></p>'
            '<button id="submit" type="submit">Submit labels (Enter)</button> '
            f'<button id="skip" type="submit" formaction="/review/{trace}/skip" formnovalidate>'
            "Skip (Esc)</button></form>"
        )
    question = escape(record.question) if record else ""
    answer = escape(record.answer) if record else ""
    return (
        f"<h1>Review</h1>{said}{facts}{error}"
        '<div class="review-grid"><section class="card trace">'
        f'<h2>Question</h2><p class="question">{question}</p>'
        f"<h2>Chunks</h2>{_chunks(leased)}"
        f'<h2>Answer</h2><p class="answer">{answer}</p></section>{form}</div>'
        f'<details class="card"><summary>Keys</summary>{_keys_help()}</details>'
    )


def _unlabellable(item: ReviewItem, reviewer: str) -> str:
    """Why the item cannot be labelled by ``reviewer`` now ("" if it can)."""
    if item.status != store_review.OPEN:
        return f"This item is {item.status}."
    now = datetime.now(UTC)
    if item.lease_owner not in (None, reviewer) and item.lease_expires and item.lease_expires > now:
        return f"{item.lease_owner} is reviewing this item until {item.lease_expires:%H:%M} UTC."
    return ""


def _said(request: Request) -> str:
    """What the previous post did, as its redirect said it."""
    said = []
    for key, verb in (("labelled", "Labelled"), ("skipped", "Skipped")):
        trace = request.query_params.get(key, "")[:32]
        if trace:
            said.append(f"{verb} trace <code>{escape(trace)}</code>.")
    if request.query_params.get("empty"):
        said.append("Nothing is left for you to review.")
    return f'<p class="notice" role="status">{" ".join(said)}</p>' if said else ""


def _form_labels(
    fields: Mapping[str, list[str]], item: ReviewItem
) -> tuple[list[ClaimLabel], dict[int, tuple[str, bool]], str]:
    """The labels a form gives, what it chose (to show again), and what is wrong ("")."""
    labels, chosen, missing = [], {}, []
    for claim in item.claims:
        verdict = (fields.get(f"verdict-{claim.index}") or [""])[0]
        critical = bool((fields.get(f"critical-{claim.index}") or [""])[0])
        chosen[claim.index] = (verdict, critical)
        if verdict not in LABELS:
            missing.append(str(claim.index))
            continue
        labels.append(ClaimLabel(claim.index, verdict, critical))  # type: ignore[arg-type]
    problem = (
        f"Label every claim first: claim {', '.join(missing)} has no verdict." if missing else ""
    )
    return labels, chosen, problem


async def _fields(request: Request) -> dict[str, list[str]] | None:
    raw = b""
    async for piece in request.stream():
        raw += piece
        if len(raw) > MAX_FORM_BYTES:
            return None
    return parse_qs(raw.decode("utf-8", "replace"))


def routes(sessions: Sessions) -> list[Route]:
    def _after(reviewer: str, tenant: str | None, said: str) -> str:
        """Where a post sends the reviewer: the next item leased, or the desk."""
        leased = next_item(sessions, reviewer, tenant, datetime.now(UTC))
        target = "/review?empty=1" if leased is None else _href(leased.item.trace_id)
        return f"{target}{'&' if '?' in target else '?'}{said}" if said else target

    async def _reviewer(request: Request) -> str:
        """Who the request labels as: the key's name (else its prefix); on an open server
        the name this browser gave ("" until it gives one)."""
        if keyed(request) is None:
            return name_given(request)
        return await run_in_threadpool(key_name, sessions, request) or ""

    def _show(
        request: Request,
        leased: Leased,
        reviewer: str,
        problem: str = "",
        chosen: Chosen | None = None,
        status: int = 200,
    ) -> Response:
        body = _item(leased, reviewer, problem, chosen or {}, _said(request))
        title = f"Review {leased.item.trace_id}"
        return page(request, title, body, "/review", status, refresh=False, assets=ASSETS)

    async def _refused(
        request: Request, trace_id: str, refusal: Refusal, chosen: Chosen | None = None
    ) -> Response:
        leased = None
        if refusal.status != 404:
            leased = await run_in_threadpool(find_item, sessions, trace_id, caller(request).tenant)
        if leased is None:
            return not_found(request, "No review item for that trace.")
        reviewer = await _reviewer(request)
        return _show(request, leased, reviewer, refusal.message, chosen, refusal.status)

    async def _desk_page(request: Request, problem: str = "", status: int = 200) -> Response:
        who = caller(request)

        def _load() -> list[ReviewItem]:
            with sessions() as session:
                return store_review.queue(session, who.tenant, COUNTED)

        items = await run_in_threadpool(_load)
        grant = grant_of(request)
        can_label = grant is None or grant.allows("review")
        said = f'<p class="error" role="alert">{escape(problem)}</p>' if problem else ""
        name = None if keyed(request) is not None else name_given(request)
        body = _desk(items, can_label, said + _said(request), name)
        return page(request, "Review", body, "/review", status, refresh=False, assets=ASSETS)

    async def desk(request: Request) -> Response:
        return await _desk_page(request)

    async def start(request: Request) -> Response:
        who = caller(request)
        typed = ""
        if keyed(request) is None:  # an open server: the name the desk's field gives
            typed = typed_name((await form_fields(request) or {}).get("by", ""))
        reviewer = typed or await _reviewer(request)
        if not reviewer:
            return await _desk_page(
                request, "Give your name first: labels record who made them.", 422
            )
        target = await run_in_threadpool(_after, reviewer, who.tenant, "")
        done = RedirectResponse(target, status_code=303, headers=HEADERS)
        if typed:
            remember_name(done, typed)
        return done

    async def show(request: Request) -> Response:
        trace_id = request.path_params["trace_id"]
        leased = await run_in_threadpool(find_item, sessions, trace_id, caller(request).tenant)
        if leased is None:
            return not_found(request, "No review item for that trace.")
        return _show(request, leased, await _reviewer(request))

    async def labels(request: Request) -> Response:
        who = caller(request)
        trace_id = request.path_params["trace_id"]
        leased = await run_in_threadpool(find_item, sessions, trace_id, who.tenant)
        if leased is None:
            return not_found(request, "No review item for that trace.")
        reviewer = await _reviewer(request)
        if not reviewer:  # an open server's browser that never gave a name: the desk asks
            return RedirectResponse("/review", status_code=303, headers=HEADERS)
        fields = await _fields(request)
        if fields is None:
            return _show(request, leased, reviewer, "That form is too large.", status=413)
        found, chosen, problem = _form_labels(fields, leased.item)
        note = (fields.get("note") or [""])[0].replace("\x00", "")
        if not problem and len(note) > MAX_NOTE:
            problem = f"The note is longer than {MAX_NOTE} characters."
        if problem:
            return _show(request, leased, reviewer, problem, chosen, 422)
        now = datetime.now(UTC)
        done = await run_in_threadpool(
            label_item, sessions, trace_id, reviewer, who.tenant, found, note, now
        )
        if isinstance(done, Refusal):
            return await _refused(request, trace_id, done, chosen)
        said = f"labelled={quote(trace_id, safe='')}"
        target = await run_in_threadpool(_after, reviewer, who.tenant, said)
        return RedirectResponse(target, status_code=303, headers=HEADERS)

    async def skip(request: Request) -> Response:
        who = caller(request)
        trace_id = request.path_params["trace_id"]
        reviewer = await _reviewer(request)
        if not reviewer:
            return RedirectResponse("/review", status_code=303, headers=HEADERS)
        now = datetime.now(UTC)
        done = await run_in_threadpool(skip_item, sessions, trace_id, reviewer, who.tenant, now)
        if isinstance(done, Refusal):
            return await _refused(request, trace_id, done)
        said = f"skipped={quote(trace_id, safe='')}"
        target = await run_in_threadpool(_after, reviewer, who.tenant, said)
        return RedirectResponse(target, status_code=303, headers=HEADERS)

    return [
        Route("/review", desk, methods=["GET"]),
        Route("/review/next", start, methods=["POST"]),
        Route("/review/{trace_id}", show, methods=["GET"]),
        Route("/review/{trace_id}/labels", labels, methods=["POST"]),
        Route("/review/{trace_id}/skip", skip, methods=["POST"]),
    ]
