"""An alert's example trace as HTML: the question, the answer with its unsupported claims
marked, the judge's claims, and the chunks the generator saw with the evidence marked.

Every piece of text comes from the monitored app and is escaped here, once, at the
point where it becomes HTML.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from html import escape
from urllib.parse import quote

from ..model import Claim, Judgement, StoredRecord

VERDICT_MARK = {"unsupported": "unsupported", "contradicted": "contradicted"}


@dataclass(frozen=True, slots=True)
class Span:
    """A stretch of text to wrap in ``<mark class=css title=title>``."""

    start: int
    end: int
    css: str
    title: str


def locate(text: str, needle: str) -> tuple[int, int] | None:
    """Where ``needle`` is in ``text``: exactly, else ignoring case; None when absent."""
    needle = needle.strip()
    if not needle:
        return None
    at = text.find(needle)
    if at < 0 and len(text.lower()) == len(text):
        # lower() keeps offsets only when it keeps the length (not so for some scripts).
        at = text.lower().find(needle.lower())
    return (at, at + len(needle)) if at >= 0 else None


def highlight(text: str, spans: Sequence[Span]) -> str:
    """``text`` escaped, with each span marked; a span overlapping an earlier one is dropped."""
    out = []
    cursor = 0
    for span in sorted(spans, key=lambda s: (s.start, -s.end)):
        if span.start < cursor:
            continue
        out.append(escape(text[cursor : span.start]))
        out.append(
            f'<mark class="{escape(span.css)}" title="{escape(span.title)}">'
            f"{escape(text[span.start : span.end])}</mark>"
        )
        cursor = span.end
    out.append(escape(text[cursor:]))
    return "".join(out)


def judgement_for(stored: StoredRecord, judge: str) -> Judgement | None:
    """The report's judge's latest evaluation of the record, else the latest of any judge."""
    own = [e for e in stored.evaluations if e.judge == judge]
    chosen = own or list(stored.evaluations)
    return chosen[-1] if chosen else None


def _answer_spans(answer: str, claims: Sequence[Claim], fallback: Sequence[str]) -> list[Span]:
    found = [(c.text, VERDICT_MARK[c.verdict]) for c in claims if c.verdict in VERDICT_MARK]
    if not claims:
        # No stored evaluation left: the alert's own list of unsupported claims.
        found = [(text, "unsupported") for text in fallback]
    spans = []
    for text, css in found:
        where = locate(answer, text)
        if where is not None:
            spans.append(Span(*where, css, f"{css} claim"))
    return spans


def _chunk_spans(text: str, position: int, claims: Sequence[Claim]) -> list[Span]:
    spans = []
    for number, claim in enumerate(claims, 1):
        if claim.chunk != position or not claim.quote:
            continue
        where = locate(text, claim.quote)
        if where is not None:
            css = "against" if claim.verdict == "contradicted" else "evidence"
            word = "contradicts" if css == "against" else "supports"
            spans.append(Span(*where, css, f"{word} claim {number}: {claim.text}"))
    return spans


def _claim_item(number: int, claim: Claim) -> str:
    where = f" · chunk {claim.chunk + 1}" if claim.chunk is not None else ""
    extra = "".join(f' <span class="flag">{escape(f)}</span>' for f in claim.flags)
    if claim.critical:
        extra += ' <span class="flag">critical</span>'
    return (
        f'<li value="{number}"><span class="verdict {escape(claim.verdict)}">'
        f"{escape(claim.verdict)}{escape(where)}</span> {escape(claim.text)}{extra}</li>"
    )


def render_example(
    trace_id: str,
    stored: StoredRecord | None,
    judge: str,
    unsupported: Sequence[str],
    link: bool = False,
) -> str:
    """One example trace; ``unsupported`` is what the alert recorded, shown if the trace is gone.

    ``link`` makes the trace id a link to its dashboard page."""
    head = f'<article class="example" id="trace-{escape(trace_id)}">'
    shown = f"<code>{escape(trace_id)}</code>"
    if link:
        shown = f'<a href="/traces/{quote(trace_id, safe="")}">{shown}</a>'
    title = f"<h4>Trace {shown}</h4>"
    if stored is None:
        items = "".join(f"<li>{escape(text)}</li>" for text in unsupported)
        return (
            f'{head}{title}<p class="muted">This trace is no longer stored (retention); the '
            f"alert recorded these unsupported claims:</p><ul>{items}</ul></article>"
        )
    record = stored.record
    judgement = judgement_for(stored, judge)
    claims = judgement.claims if judgement is not None else ()
    labels = ", ".join(f"{k}={v}" for k, v in sorted(record.labels.items())) or "no labels"
    meta = (
        f'<p class="meta">started {record.started_at:%Y-%m-%d %H:%M:%S} UTC · '
        f"{escape(labels)}"
        + (f" · judged by <code>{escape(judgement.judge)}</code>" if judgement else "")
        + "</p>"
    )
    answer = highlight(record.answer, _answer_spans(record.answer, claims, unsupported))
    claim_list = (
        '<h5>Claims</h5><ol class="claims">'
        + "".join(_claim_item(i, c) for i, c in enumerate(claims, 1))
        + "</ol>"
        if claims
        else ""
    )
    chunks = []
    for chunk in record.chunks:
        name = f" · <code>{escape(chunk.id)}</code>" if chunk.id else ""
        score = f" · score {chunk.score:.3g}" if chunk.score is not None else ""
        body = highlight(chunk.text, _chunk_spans(chunk.text, chunk.position, claims))
        chunks.append(
            f'<li><div class="chunk-head">chunk {chunk.position + 1}{name}{score}</div>'
            f'<p class="chunk-text">{body}</p></li>'
        )
    chunk_list = (
        '<h5>Chunks passed to the generator</h5><ol class="chunks">' + "".join(chunks) + "</ol>"
        if chunks
        else '<p class="muted">No chunks were passed to the generator.</p>'
    )
    return (
        f"{head}{title}{meta}"
        f'<dl class="qa"><dt>Question</dt><dd>{escape(record.question)}</dd>'
        f'<dt>Answer</dt><dd class="answer">{answer}</dd></dl>'
        f"{claim_list}{chunk_list}</article>"
    )


def render_reference(trace_id: str, where: str, unsupported: Sequence[str]) -> str:
    """A trace already shown in full under another alert: a link and its unsupported claims."""
    claims = "; ".join(unsupported)
    return (
        f'<article class="example ref"><h4>Trace <code>{escape(trace_id)}</code></h4>'
        f'<p class="muted">Shown in full under <a href="#trace-{escape(trace_id)}">alert '
        f"{escape(where)}</a>. Unsupported: {escape(claims)}</p></article>"
    )
