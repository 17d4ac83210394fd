"""``GET /metrics``: Prometheus text exposition of faithfulness per segment.

Counters are cumulative since the database was created (the worker adds to them
as it writes evaluations), so Prometheus ``rate()`` and ``histogram_quantile()``
work on them as on any exporter's; the context- and answer-relevance histograms too.
They hold every tenant's segments, so a key bound to a tenant is refused (403).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route

from ..model import partition_label
from ..store import Sessions, metrics

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
TENANT_REFUSED = "/metrics holds every tenant's segments: scrape it with a key bound to none"


def _labels(values: Mapping[str, str]) -> str:
    def escape(value: str) -> str:
        return value.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')

    ordered = sorted(values.items(), key=lambda item: (item[0] == "le", item[0]))
    inner = ",".join(f'{k}="{escape(v)}"' for k, v in ordered)
    return "{" + inner + "}"


def render(snapshot: Mapping[str, Any]) -> str:
    lines: list[str] = []

    def family(name: str, kind: str, help_text: str) -> None:
        lines.append(f"# HELP {name} {help_text}")
        lines.append(f"# TYPE {name} {kind}")

    counters = (
        ("faithmon_evaluations_total", "evaluations", "Evaluations written, by segment and judge."),
        (
            "faithmon_unsupported_records_total",
            "unsupported",
            "Scored records with at least one unsupported claim.",
        ),
        (
            "faithmon_critical_unsupported_records_total",
            "critical_unsupported",
            "Scored records with an unsupported critical claim (numbers, dates, names).",
        ),
        ("faithmon_judge_errors_total", "judge_errors", "Evaluations that ended in judge_error."),
    )
    for name, field, help_text in counters:
        family(name, "counter", help_text)
        for row in snapshot["segments"]:
            labels = {**_segment(row["segment"]), "judge": row["judge"]}
            lines.append(f"{name}{_labels(labels)} {row[field]}")

    def histogram(
        name: str, bounds: Sequence[float], row: Mapping[str, Any], counts: Mapping[str, Any]
    ) -> None:
        labels = {**_segment(row["segment"]), "judge": row["judge"]}
        for bound, count in zip(bounds, counts["buckets"], strict=True):
            lines.append(f"{name}_bucket{_labels({**labels, 'le': repr(bound)})} {count}")
        lines.append(f"{name}_bucket{_labels({**labels, 'le': '+Inf'})} {counts['count']}")
        lines.append(f"{name}_sum{_labels(labels)} {counts['sum']}")
        lines.append(f"{name}_count{_labels(labels)} {counts['count']}")

    family(
        "faithmon_faithfulness",
        "histogram",
        "Strict faithfulness (supported claims / claims) of scored records.",
    )
    for row in snapshot["segments"]:
        scored = {"buckets": row["buckets"], "sum": row["faithfulness_sum"], "count": row["scored"]}
        histogram("faithmon_faithfulness", metrics.BUCKETS, row, scored)
    for measure, help_text in (
        ("context_relevance", "How much of what the question asks the chunks bear on."),
        ("answer_relevance", "How much of the answer addresses the question."),
    ):
        name = f"faithmon_{measure}"
        family(name, "histogram", f"{help_text} Over the evaluations stored that measured it.")
        for row in snapshot["segments"]:
            measured = row["relevance"][measure]
            if measured["count"]:
                histogram(name, metrics.RELEVANCE_BUCKETS, row, measured)
    family("faithmon_queue_depth", "gauge", "Records waiting for the judge.")
    lines.append(f"faithmon_queue_depth {snapshot['queue_depth']}")
    family("faithmon_records", "gauge", "Stored records by status.")
    for status, count in sorted(snapshot["records"].items()):
        lines.append(f"faithmon_records{_labels({'status': status})} {count}")
    for field, help_text in (
        ("calls", "Judge requests answered."),
        ("prompt_tokens", "Judge prompt tokens."),
        ("completion_tokens", "Judge completion tokens."),
    ):
        name = f"faithmon_judge_{field}_total"
        family(name, "counter", help_text)
        for usage in snapshot["judge_usage"]:
            lines.append(f"{name}{_labels({'judge': usage['judge']})} {usage[field]}")
    return "\n".join(lines) + "\n"


def _segment(segment: Mapping[str, str]) -> dict[str, str]:
    """A segment as labels: ``segment="overall"``, ``segment="route",value="billing"``; one
    within a tenant's partition (``model.segments_of``) adds ``tenant="acme"``."""
    if not segment:
        return {"segment": "overall"}
    # A partition's own overall ({tenant: acme}) reads as any one-label segment.
    within = partition_label(tuple(segment)) if len(segment) > 1 else None
    ((name, value),) = ((k, v) for k, v in segment.items() if k != within)
    labels = {"segment": name, "value": value}
    if within:
        labels[within] = segment[within]
    return labels


def route(sessions: Sessions) -> Route:
    def read() -> str:
        with sessions() as session:
            return render(metrics.snapshot(session))

    async def endpoint(request: Request) -> Response:
        if getattr(request.state, "tenant", None) is not None:
            # The counters are every tenant's segments and label values together.
            return PlainTextResponse(TENANT_REFUSED + "\n", status_code=403)
        return Response(await run_in_threadpool(read), media_type=CONTENT_TYPE)

    return Route("/metrics", endpoint, methods=["GET"])
