"""An alert's example trace as HTML: the question, the answer with its unsupported claims
marked, the judge's claims, and the chunks the generator saw with the evidence marked.

The contracts beside the score are drawn too: a claim whose citation markers name chunks
that do not support it is marked on the answer with a link to each chunk it names; the
unresolved markers are counted, and the policy findings are listed with the trace.

Every piece of text comes from the monitored app and is escaped here, once, at the
point where it becomes HTML.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from html import escape
from urllib.parse import quote

from ..model import Claim, Judgement, StoredRecord

# Citation markers as an answer writes them after a claim: [2], [1, 3], [doc-3], [^1], ^1.
_MARKERS = re.compile(r"(?:\s*(?:\[\^?[^\[\]\n]{1,80}\](?!\()|\^\d{1,3}\b))+")
VERDICT_MARK = {"unsupported": "unsupported", "contradicted": "contradicted", "partial": "partial"}


@dataclass(frozen=True, slots=True)
class Span:
    """A stretch of text to wrap in ``<mark class=css title=title>``."""

    start: int
    end: int
    css: str
    title: str
    after: str = ""
    """HTML put right after the mark, escaped by whoever built it (a link to a chunk)."""


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
            f"{escape(text[span.start : span.end])}</mark>{span.after}"
        )
        cursor = span.end
    out.append(escape(text[cursor:]))
    return "".join(out)


def judgement_for(stored: StoredRecord, judge: str) -> Judgement | None:
    """The report's judge's latest evaluation of the record, else the latest of any judge."""
    own = [e for e in stored.evaluations if e.judge == judge]
    chosen = own or list(stored.evaluations)
    return chosen[-1] if chosen else None


@dataclass(frozen=True, slots=True)
class _Anchors:
    """Each chunk's anchor on the page and its shown number, by its index as the generator
    got it (what a claim's ``citations`` hold)."""

    trace_id: str
    numbers: tuple[int, ...]

    def anchor(self, index: int) -> str:
        return f"trace-{self.trace_id}-chunk-{self.number(index)}"

    def number(self, index: int) -> int:
        return self.numbers[index] if 0 <= index < len(self.numbers) else index + 1

    def link(self, index: int) -> str:
        shown = f"[{self.number(index)}]"
        if not 0 <= index < len(self.numbers):
            return escape(shown)
        return f'<a href="#{escape(self.anchor(index))}">{escape(shown)}</a>'


def _cite_note(claim: Claim, chunks: _Anchors) -> str:
    """'cites [2] — chunk 2 does not support this', each [n] a link to its chunk."""
    links = " ".join(chunks.link(i) for i in claim.citations)
    numbers = ", ".join(str(chunks.number(i)) for i in claim.citations)
    said = f"chunks {numbers} do" if len(claim.citations) > 1 else f"chunk {numbers} does"
    return f' <span class="cite-note">cites {links} — {escape(said)} not support this</span>'


def _in_answer(answer: str, claim: str) -> tuple[int, int] | None:
    """Where the claim is in the answer, with the citation markers written right after it.

    Judges read the answer with its markers cut out, so a claim ending "card." may be
    written "card [2]." in the answer: it is looked for without its full stop too."""
    where = locate(answer, claim) or locate(answer, claim.rstrip().rstrip(".!?"))
    if where is None:
        return None
    markers = _MARKERS.match(answer, where[1])
    return (where[0], markers.end() if markers else where[1])


def _answer_spans(
    answer: str, claims: Sequence[Claim], fallback: Sequence[str], chunks: _Anchors
) -> list[Span]:
    if not claims:
        # No stored evaluation left: the alert's own list of unsupported claims.
        found = [_in_answer(answer, text) for text in fallback]
        return [Span(*w, "unsupported", "unsupported claim") for w in found if w is not None]
    spans = []
    for claim in claims:
        css = [VERDICT_MARK[claim.verdict]] if claim.verdict in VERDICT_MARK else []
        title = [f"{claim.verdict} claim"] if css else []
        after = ""
        if claim.citation == "wrong":
            css.append("citation-wrong")
            title.append("its citation names chunks that do not support it")
            after = _cite_note(claim, chunks)
        where = _in_answer(answer, claim.text) if css else None
        if where is not None:
            spans.append(Span(*where, " ".join(css), "; ".join(title), after))
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


def _citation(claim: Claim, chunks: _Anchors, marked: bool) -> str:
    """Whether the chunks the claim's markers name support it; ``marked``: the answer has
    markers, so a claim citing nothing is worth saying."""
    if claim.citation == "unresolved":
        return ' <span class="citation unresolved">cites no chunk it was given</span>'
    if claim.citation == "none" and marked:
        return ' <span class="citation none">cites nothing</span>'
    if claim.citation not in ("correct", "wrong") or not claim.citations:
        return ""
    links = " ".join(chunks.link(i) for i in claim.citations)
    return f' <span class="citation {claim.citation}">cites {links}: {claim.citation}</span>'


def _claim_item(number: int, claim: Claim, chunks: _Anchors, marked: bool) -> str:
    where = f" · chunk {claim.chunk + 1}" if claim.chunk is not None else ""
    extra = "".join(f' <span class="flag">{escape(f)}</span>' for f in claim.flags)
    if claim.critical:
        rule = f": {claim.critical_rule}" if claim.critical_rule else ""
        extra += f' <span class="flag critical">critical{escape(rule)}</span>'
    extra += _citation(claim, chunks, marked)
    if claim.verdict == "partial" and claim.missing:
        extra += f' <span class="missing">missing: {escape(claim.missing)}</span>'
    return (
        f'<li value="{number}"><span class="verdict {escape(claim.verdict)}">'
        f"{escape(claim.verdict)}{escape(where)}</span> {escape(claim.text)}{extra}</li>"
    )


def _contracts(judgement: Judgement) -> str:
    """The citation tally and the policy findings of one evaluation."""
    said = []
    cited = [c for c in judgement.claims if c.citation in ("correct", "wrong", "unresolved")]
    if judgement.citation_accuracy is not None:
        right = sum(c.citation == "correct" for c in cited)
        said.append(
            f"citations: {right} of {len(cited)} citing claims cite chunks that support them "
            f"(accuracy {judgement.citation_accuracy:.2f})"
        )
    if judgement.unresolved_citations:
        n = judgement.unresolved_citations
        said.append(
            f'<span class="unresolved">{n} citation marker{"s" * (n != 1)} '
            f"name{'s' * (n == 1)} no chunk the generator was given</span>"
        )
    tally = f'<p class="citations">{" · ".join(said)}</p>' if said else ""
    if not judgement.policy:
        return tally
    items = "".join(
        f'<li><span class="flag policy">{escape(f.rule)}</span> <code>{escape(f.text)}</code></li>'
        for f in judgement.policy
    )
    return f'{tally}<h5>Policy findings</h5><ul class="policy">{items}</ul>'


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
    shown = f'<code class="trace-id">{escape(trace_id)}</code>'
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
    anchors = _Anchors(trace_id, tuple(c.position + 1 for c in record.chunks))
    marked = judgement is not None and (
        judgement.citation_accuracy is not None or judgement.unresolved_citations > 0
    )
    answer = highlight(record.answer, _answer_spans(record.answer, claims, unsupported, anchors))
    claim_list = (
        '<h5>Claims</h5><ol class="claims">'
        + "".join(_claim_item(i, c, anchors, marked) for i, c in enumerate(claims, 1))
        + "</ol>"
        if claims
        else ""
    )
    contracts = _contracts(judgement) if judgement is not None else ""
    chunks = []
    for index, chunk in enumerate(record.chunks):
        name = f" · <code>{escape(chunk.id)}</code>" if chunk.id else ""
        score = f" · score {chunk.score:.3g}" if chunk.score is not None else ""
        wrong = [
            str(n)
            for n, c in enumerate(claims, 1)
            if c.citation == "wrong" and index in c.citations
        ]
        cited = (
            f' · <span class="cited-wrong">cited by claim{"s" * (len(wrong) > 1)} '
            f"{', '.join(wrong)}, which it does not support</span>"
            if wrong
            else ""
        )
        body = highlight(chunk.text, _chunk_spans(chunk.text, chunk.position, claims))
        chunks.append(
            f'<li id="{escape(anchors.anchor(index))}">'
            f'<div class="chunk-head">chunk {chunk.position + 1}{name}{score}{cited}</div>'
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
        f"{claim_list}{contracts}{chunk_list}</article>"
    )


def render_reference(trace_id: str, where: str, unsupported: Sequence[str]) -> str:
    """A trace already shown in full under another alert: a link and its unsupported claims."""
    claims = "; ".join(unsupported)
    return (
        f'<article class="example ref"><h4>Trace <code class="trace-id">{escape(trace_id)}</code>'
        "</h4>"
        f'<p class="muted">Shown in full under <a href="#trace-{escape(trace_id)}">alert '
        f"{escape(where)}</a>. Unsupported: {escape(claims)}</p></article>"
    )
