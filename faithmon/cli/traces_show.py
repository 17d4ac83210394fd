"""How ``faithmon traces show`` prints one trace for a person: the record, then each chunk
with the claims that cite it and their verdicts, then the claims that cite no chunk.

It renders the API's trace view (:mod:`faithmon.store.trace_view`), so what a person reads
is what ``--json`` and the read API say. Verdicts that fail the answer are written in
capitals and marked ``!``/``?``, so they stand out with colour off too (click drops the
styles when stdout is not a terminal). Chunks are numbered from 1, as the answer's ``[n]``
markers and the trace page number them; ``--json`` keeps the positions, from 0."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from datetime import datetime
from typing import Any

import click

from ..model.records import kept_because

_VERDICT: dict[str, tuple[str, str, dict[str, Any]]] = {
    "supported": ("+", "supported", {"fg": "green"}),
    "contradicted": ("!", "CONTRADICTED", {"fg": "red", "bold": True}),
    "unsupported": ("?", "UNSUPPORTED", {"fg": "yellow", "bold": True}),
    "partial": ("~", "PARTIAL", {"fg": "yellow", "bold": True}),
}
_INDENT = "      "


def plain(text: str) -> str:
    """Stored text made harmless for a terminal: control and format characters (an escape
    sequence could rewrite the screen, a bidi mark reorder it) shown as escapes; newlines
    and tabs kept."""
    return "".join(
        c if c.isprintable() or c in "\n\t" else c.encode("unicode_escape").decode("ascii")
        for c in text
    )


def when(value: datetime) -> str:
    return f"{value:%Y-%m-%d %H:%M:%S}"


def score(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def _block(text: str) -> Iterator[str]:
    for line in text.splitlines() or [""]:
        yield _INDENT + line


def _underlined(text: str, quotes: Sequence[str]) -> str:
    """``text`` with each quoted evidence span underlined where it occurs."""
    spans: list[tuple[int, int]] = []
    for quote in quotes:
        at = text.find(quote) if quote else -1
        if at >= 0:
            spans.append((at, at + len(quote)))
    out, done = [], 0
    for start, end in sorted(spans):
        start = max(start, done)
        if start < end:
            out += [text[done:start], click.style(text[start:end], underline=True)]
            done = end
    return "".join(out) + text[done:]


def _cites(claim: Mapping[str, Any], marked: bool) -> str | None:
    """Whether the chunks the claim's markers name support it; ``marked``: the answer has
    markers, so a claim citing nothing is worth saying."""
    named = " ".join(f"[{i + 1}]" for i in claim["citations"])
    verdict = claim["citation"]
    if verdict == "correct":
        return click.style(f"cites {named}: correct", fg="green")
    if verdict == "wrong":
        return click.style(f"cites {named}: WRONG, not supported there", fg="red", bold=True)
    if verdict == "unresolved":
        return click.style("cites no chunk it was given", fg="yellow")
    if verdict == "none" and marked:
        return click.style("cites nothing", dim=True)
    return None


def _claim_line(claim: Mapping[str, Any], tag: str, marked: bool = False) -> str:
    mark, word, style = _VERDICT.get(claim["verdict"], ("?", claim["verdict"], {}))
    parts = [click.style(f"{mark} {word:<12}", **style)]
    if claim["critical"]:
        rule = claim["critical_rule"]
        said = f"critical ({plain(rule)})" if rule else "critical"
        parts.append(click.style(said, fg="red", bold=True))
    parts.append(plain(claim["text"]))
    if claim["quote"]:
        parts.append(click.style(f'("{plain(claim["quote"])}")', dim=True))
    if claim["missing"]:
        parts.append(click.style(f'missing: "{plain(claim["missing"])}"', fg="yellow"))
    cites = _cites(claim, marked)
    if cites:
        parts.append(f" {cites}")
    return f"{_INDENT}{tag}{' '.join(parts)}"


def _counts(claims: Sequence[Mapping[str, Any]]) -> str:
    if not claims:
        return "no claims"
    found = [v for v in _VERDICT if any(c["verdict"] == v for c in claims)]
    said = [f"{sum(c['verdict'] == v for c in claims)} {v}" for v in found]
    bad = sum(c["critical"] and c["verdict"] != "supported" for c in claims)
    if bad:
        said.append(click.style(f"{bad} critical", fg="red", bold=True))
    return f"{len(claims)} claim{'s' * (len(claims) != 1)}: {', '.join(said)}"


def _evaluation_line(number: int, evaluation: Mapping[str, Any]) -> str:
    failed = evaluation["status"] == "judge_error"
    words = [
        f"  #{number}",
        plain(evaluation["judge"]),
        click.style(evaluation["status"], fg="red") if failed else evaluation["status"],
        f"strict {score(evaluation['faithfulness'])}",
        f"lenient {score(evaluation['lenient'])}",
        f"at {when(evaluation['created_at'])}",
    ]
    if not evaluation["trusted"]:
        words.append(click.style("UNTRUSTED (judge unproven or drifting)", fg="yellow"))
    if failed:
        words.append(f"error: {plain(evaluation['error'] or '')}")
    else:
        words.append(_counts(evaluation["claims"]))
    return "  ".join(words)


def _marked(evaluation: Mapping[str, Any]) -> bool:
    """The answer has citation markers (resolved or not)."""
    cited = evaluation["citation_accuracy"] is not None
    return cited or evaluation["unresolved_citations"] > 0


def _contracts(evaluation: Mapping[str, Any]) -> Iterator[str]:
    """Citation accuracy and unresolved markers, then each policy finding, under the
    evaluation's line."""
    said = []
    accuracy = evaluation["citation_accuracy"]
    if accuracy is not None:
        verdicts = [c["citation"] for c in evaluation["claims"]]
        cited = sum(v in ("correct", "wrong", "unresolved") for v in verdicts)
        right = verdicts.count("correct")
        text = f"citation accuracy {score(accuracy)} ({right} of {cited} citing claims correct)"
        said.append(text if accuracy == 1 else click.style(text, fg="yellow"))
    unresolved = evaluation["unresolved_citations"]
    if unresolved:
        text = f"{unresolved} unresolved marker{'s' * (unresolved != 1)} (no such chunk)"
        said.append(click.style(text, fg="yellow"))
    if said:
        yield f"{_INDENT}{', '.join(said)}"
    for finding in evaluation["policy"]:
        rule = click.style(f"policy {plain(finding['rule'])}", fg="red", bold=True)
        yield f'{_INDENT}{rule}: "{plain(finding["text"])}"'
    relevance = _relevance(evaluation)
    if relevance:
        yield f"{_INDENT}{relevance}"


def _relevance(evaluation: Mapping[str, Any]) -> str | None:
    """Context and answer relevance, and the cause or abstention; None when the judge
    measured none of them (a line of dashes would say nothing)."""
    context, answer = evaluation["context_relevance"], evaluation["answer_relevance"]
    cause, abstention = evaluation["cause"], evaluation["abstention"]
    if context is None and answer is None and cause is None and abstention is None:
        return None
    said = [f"context relevance {score(context)}", f"answer relevance {score(answer)}"]
    if cause is not None:
        said.append(click.style(f"cause {plain(cause)}", fg="yellow"))
    if abstention is not None:
        text = f"abstention {plain(abstention)}"
        said.append(text if abstention == "correct" else click.style(text, fg="yellow"))
    return ", ".join(said)


def _head(view: Mapping[str, Any]) -> Iterator[str]:
    yield click.style(f"trace {view['trace_id']}", bold=True) + f"  {view['status']}"
    yield f"  started  {when(view['started_at'])} UTC   ingested {when(view['ingested_at'])} UTC"
    labels = " ".join(f"{k}={v}" for k, v in sorted(view["labels"].items()))
    yield f"  labels   {plain(labels) or '-'}"
    sampling = view["sampling"]
    asked = sampling["keep_requested"]
    asked = f" (the app asked: {plain(asked)})" if asked else ""
    yield f"  sampler  {plain(kept_because(sampling['reason']))}{asked}"
    if view["incomplete_reason"]:
        yield f"  incomplete  {plain(view['incomplete_reason'])}"
    for given in view["feedback"]:
        yield f"  feedback {plain(str(given['value']))} at {when(given['at'])} UTC"
    yield click.style("question", bold=True)
    yield from _block(plain(view["question"]))
    yield click.style("answer", bold=True)
    yield from _block(plain(view["answer"]))


def _chunks(view: Mapping[str, Any]) -> Iterator[str]:
    evaluations = view["evaluations"]
    several = len(evaluations) > 1
    # Position → the claims citing that chunk, each tagged with its evaluation's number.
    cited: dict[int | None, list[tuple[str, Mapping[str, Any], bool]]] = {}
    positions = {c["position"] for c in view["chunks"]}
    for number, evaluation in enumerate(evaluations, 1):
        marked = _marked(evaluation)
        for claim in evaluation["claims"]:
            where = claim["chunk"] if claim["chunk"] in positions else None
            tag = f"#{number} " if several else ""
            cited.setdefault(where, []).append((tag, claim, marked))
    yield click.style(f"chunks ({len(view['chunks'])}, as passed to the generator)", bold=True)
    for chunk in view["chunks"]:
        claims = cited.get(chunk["position"], [])
        name = plain(chunk["id"]) if chunk["id"] is not None else "(no id)"
        yield f"  [{chunk['position'] + 1}] {name}  score {score(chunk['score'])}"
        quotes = [plain(c["quote"]) for _, c, _ in claims if c["quote"]]
        yield from _block(_underlined(plain(chunk["text"]), quotes))
        yield from (_claim_line(claim, tag, marked) for tag, claim, marked in claims)
    if None in cited:
        yield click.style("claims citing no chunk", bold=True)
        yield from (_claim_line(claim, tag, marked) for tag, claim, marked in cited[None])


def render(view: Mapping[str, Any]) -> Iterator[str]:
    """The lines of one trace (styled: echo them with click, which knows the terminal)."""
    yield from _head(view)
    evaluations = view["evaluations"]
    yield click.style(f"evaluations ({len(evaluations)}, oldest first)", bold=True)
    if not evaluations:
        yield "  not scored yet"
    for number, evaluation in enumerate(evaluations, 1):
        yield _evaluation_line(number, evaluation)
        yield from _contracts(evaluation)
    yield from _chunks(view)
    if view["retrieved"]:
        yield click.style("retrieved (as the retriever returned them)", bold=True)
        for chunk in view["retrieved"]:
            name = plain(chunk["id"]) if chunk["id"] is not None else "(no id)"
            yield f"  [{chunk['position'] + 1}] {name}  score {score(chunk['score'])}"
