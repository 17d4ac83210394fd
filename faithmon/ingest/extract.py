"""Join the spans (and log records) of one trace into one RagRecord.

Each span is read by its convention (see ``conventions``) into Facts; this
module alone decides how they combine. Precedence, in one place:

- **Request span**: faithmon's request span, else the trace's root span.
- **Generation**: the last generation span to end (an LLM call that produced text).
- **Chunks**: an explicit context span wins; else the last reranker or retriever
  span that ended before the generation ended; else the last of them. The
  retrieval list is kept beside the judged chunks when a rerank or context
  replaced it.
- **Question**: the request span's input; else the first retrieval's query; else
  the generation's last user message; else a legacy ``gen_ai.user.message`` log.
- **Answer**: the generation's output; else the request span's output; else a
  legacy ``gen_ai.choice`` log.
- **Labels**: ``service`` from the resource; the model of the generation;
  retriever/reranker names and versions; faithmon's own ``faithmon.label.*``.
- **Evidence**: a problem with the chosen chunks (dropped attributes or
  events, unreadable chunk JSON or keys, a chunk without text, failed checks)
  makes the record incomplete; so does a faithmon request span that counted
  more retrieval, rerank or context spans (or chunks) than arrived, since a
  lost export would otherwise look like a request without retrieval.

A trace with neither question nor answer is not a RAG request (None).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from faithmon_instrumentation import attributes as attr

from ..model import Feedback, RagRecord
from . import conventions
from .conventions.facts import Facts
from .conventions.values import pick
from .spans import REPAIRED, IngestLog, IngestSpan, TraceItem
from .tenancy import stamped_tenant

USER_MESSAGE_EVENT = "gen_ai.user.message"
CHOICE_EVENT = "gen_ai.choice"


def _legacy_log_text(logs: Sequence[IngestLog], event: str) -> str | None:
    for log in sorted(logs, key=lambda item: item.time_ns, reverse=event == CHOICE_EVENT):
        if log.event_name != event:
            continue
        body: Any = log.body
        if isinstance(body, Mapping) and isinstance(body.get("message"), Mapping):
            body = body["message"]
        found = pick(body, ("content",))
        if found:
            return found
    return None


def _root(spans: Sequence[IngestSpan], facts: Mapping[str, Facts]) -> IngestSpan | None:
    for span in spans:
        found = facts.get(span.span_id)
        if found is not None and found.convention == "faithmon" and found.role == "request":
            return span
    roots = [s for s in spans if s.parent_span_id is None]
    return min(roots, key=lambda s: s.start_ns) if roots else None


def _evidence(
    spans: Sequence[IngestSpan], facts: Mapping[str, Facts], generation: IngestSpan | None
) -> tuple[Facts | None, Facts | None]:
    """(the judged chunk list, the last retrieval list) by the precedence above."""
    carrying = [s for s in spans if facts[s.span_id].documents is not None]
    contexts = [s for s in carrying if facts[s.span_id].role == "context"]
    retrievals = [s for s in carrying if facts[s.span_id].role == "retrieval"]
    last_retrieval = facts[retrievals[-1].span_id] if retrievals else None
    if contexts:
        return facts[contexts[-1].span_id], last_retrieval
    ranked = [s for s in carrying if facts[s.span_id].role in ("retrieval", "rerank")]
    if generation is not None:
        before = [s for s in ranked if s.end_ns <= generation.end_ns]
        ranked = before or ranked
    return (facts[ranked[-1].span_id] if ranked else None), last_retrieval


def _missing(
    root: IngestSpan | None,
    root_facts: Facts | None,
    spans: Sequence[IngestSpan],
    facts: Mapping[str, Facts],
) -> str | None:
    """Which of the request span's counted children did not arrive, or None."""
    if root is None or root_facts is None or root_facts.convention != "faithmon":
        return None
    children = [
        facts[s.span_id]
        for s in spans
        if s.parent_span_id == root.span_id and facts[s.span_id].convention == "faithmon"
    ]
    for role, expected in root_facts.expected.items():
        got = sum(f.role == role for f in children)
        if got < expected:
            return f"{role} span missing: expected {expected}, got {got}"
    if root_facts.expected_chunks is not None:
        got = sum(
            len(f.documents or ()) for f in children if f.role in ("retrieval", "rerank", "context")
        )
        if got < root_facts.expected_chunks:
            return f"chunks missing: expected {root_facts.expected_chunks}, got {got}"
    return None


def extract(items: Sequence[TraceItem]) -> RagRecord | None:
    """Build the trace's RAG record, or None when the trace is not a RAG request."""
    logs = [i for i in items if isinstance(i, IngestLog)]
    spans = sorted(
        (i for i in items if isinstance(i, IngestSpan)), key=lambda s: (s.end_ns, s.start_ns)
    )
    read = {s.span_id: conventions.read_span(s) for s in spans}
    facts = {k: f for k, f in read.items() if f is not None}
    spans = [s for s in spans if s.span_id in facts]
    all_spans = sorted(
        (i for i in items if isinstance(i, IngestSpan)), key=lambda s: (s.end_ns, s.start_ns)
    )
    if not spans and not logs:
        return None
    root = _root(all_spans, facts)
    root_facts = facts.get(root.span_id) if root is not None else None
    generations = [s for s in spans if facts[s.span_id].role == "generation"]
    generation = generations[-1] if generations else None
    gen_facts = facts[generation.span_id] if generation is not None else None
    judged, retrieved = _evidence(spans, facts, generation)

    question = root_facts.question if root_facts is not None else None
    for span in spans:
        found = facts[span.span_id]
        if question is None and found.role in ("retrieval", "rerank"):
            question = found.question
    question = (
        question
        or (gen_facts.question if gen_facts else None)
        or _legacy_log_text(logs, USER_MESSAGE_EVENT)
    )
    answer = (
        (gen_facts.answer if gen_facts else None)
        or (root_facts.answer if root_facts else None)
        or _legacy_log_text(logs, CHOICE_EVENT)
    )
    if question is None and answer is None:
        return None
    if judged is None and gen_facts is None and root_facts is None and not logs:
        return None

    anchor = root or (all_spans[0] if all_spans else None)
    labels: dict[str, str] = {}
    service = anchor.resource.get(attr.SERVICE_NAME) if anchor is not None else None
    if service:
        labels["service"] = str(service)
    if gen_facts is not None:
        if gen_facts.model:
            labels["model"] = gen_facts.model
        labels.update(gen_facts.labels)
    for source in (retrieved, judged, root_facts):
        if source is not None:
            labels.update(source.labels)
    tenant = stamped_tenant(items)
    if tenant is not None:
        labels["tenant"] = tenant

    problem = judged.problem if judged is not None else None
    problem = problem or _missing(root, root_facts, spans, facts)
    if problem is None and root is not None and root.dropped_attributes:
        problem = f"request span dropped {root.dropped_attributes} attributes"
    chunks = judged.documents or () if judged is not None else ()
    retrieved_chunks = (
        retrieved.documents or () if retrieved is not None and retrieved is not judged else ()
    )
    trace_id = items[0].trace_id
    times = [s.start_ns for s in all_spans] or [log.time_ns for log in logs]
    used = {f.convention for f in (root_facts, judged, gen_facts, retrieved) if f is not None}
    if logs and (question or answer) and not used:
        used.add("genai-events")
    return RagRecord(
        trace_id=trace_id,
        question=question or "",
        answer=answer or "",
        chunks=tuple(chunks),
        labels=labels,
        started_at=datetime.fromtimestamp(min(times) / 1e9, tz=UTC),
        retrieved=tuple(retrieved_chunks),
        generation=dict(gen_facts.generation) if gen_facts is not None else {},
        keep=root_facts.keep if root_facts is not None else None,
        incomplete=problem,
        convention="+".join(sorted(used)),
        error=any(s.error for s in all_spans),
        trace_state=root.trace_state if root is not None else "",
        root_span_id=anchor.span_id if anchor is not None else "",
        repairs=_decoder_repairs(items),
    )


def _decoder_repairs(items: Sequence[TraceItem]) -> tuple[str, ...]:
    """The repairs the OTLP/JSON decoder made to the trace's strings, as one note."""
    counts = (item.attributes.get(REPAIRED) for item in items)
    marked = sum(1 for c in counts if isinstance(c, int) and not isinstance(c, bool) and c > 0)
    if not marked:
        return ()
    what = "span or log record" if marked == 1 else "spans and log records"
    return (f"OTLP/JSON: lone surrogates replaced by U+FFFD in {marked} {what}",)


def extract_feedback(items: Sequence[TraceItem]) -> list[Feedback]:
    """Feedback spans (``faithmon_instrumentation.record_feedback``) in the trace."""
    found = []
    for span in items:
        if not isinstance(span, IngestSpan):
            continue
        if span.attributes.get(attr.FAITHMON_ROLE) != attr.ROLE_FEEDBACK:
            continue
        trace_id = span.attributes.get(attr.FEEDBACK_TRACE_ID)
        value = span.attributes.get(attr.FEEDBACK_VALUE)
        if not isinstance(trace_id, str) or len(trace_id) != 32:
            continue
        try:
            int(trace_id, 16)
        except ValueError:
            continue
        if not isinstance(value, str | int | float | bool):
            continue
        found.append(
            Feedback(
                trace_id=trace_id.lower(),
                value=value,
                at=datetime.fromtimestamp(span.start_ns / 1e9, tz=UTC),
            )
        )
    return found
