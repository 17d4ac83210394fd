"""Telemetry out: OpenTelemetry metrics and ``gen_ai.evaluation.result`` events.

Each evaluation the worker writes adds to OTel counters and histograms
(attributes: the judge and the record's segment labels) and is emitted as
``gen_ai.evaluation.result`` log events parented to the evaluated trace's root
span, so trace UIs show the verdict beside the request: one per measure
(faithfulness, and context and answer relevance when the judge measured them; an
unfaithful answer's cause rides on each). Both go over OTLP/HTTP to
``FAITHMON_TELEMETRY_ENDPOINT`` (a Collector, usually). Events carry scores and
counts, never record content.
"""

from __future__ import annotations

from collections.abc import Sequence

from opentelemetry.context import Context
from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter
from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import BatchLogRecordProcessor
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader
from opentelemetry.sdk.resources import Resource
from opentelemetry.trace import NonRecordingSpan, SpanContext, TraceFlags, set_span_in_context

from ..model import RETRIEVAL_BAR, Judgement, RagRecord, claim_supported

EVENT = "gen_ai.evaluation.result"
EVALUATION_NAME = "faithfulness"
RELEVANCE = {
    "context_relevance": "How much of what the question asks the chunks bear on",
    "answer_relevance": "How much of the answer addresses the question",
}
RELEVANT = RETRIEVAL_BAR
"""A relevance score's label: ``relevant`` from this bar up (the scale's midpoint, the
bar below which the chunks miss the question), ``irrelevant`` below it."""

Attributes = dict[str, str | float | int]


def _url(endpoint: str, path: str) -> str:
    return endpoint.rstrip("/") + path


class EvaluationTelemetry:
    """Callable the worker runs for every evaluation it writes."""

    def __init__(
        self,
        endpoint: str,
        dimensions: Sequence[str],
        service_name: str = "faithmon-worker",
        export_interval_ms: int = 10_000,
    ) -> None:
        resource = Resource.create({"service.name": service_name})
        self._logs = LoggerProvider(resource=resource)
        self._logs.add_log_record_processor(
            BatchLogRecordProcessor(OTLPLogExporter(endpoint=_url(endpoint, "/v1/logs")))
        )
        self._reader = PeriodicExportingMetricReader(
            OTLPMetricExporter(endpoint=_url(endpoint, "/v1/metrics")),
            export_interval_millis=export_interval_ms,
        )
        self._metrics = MeterProvider(resource=resource, metric_readers=[self._reader])
        meter = self._metrics.get_meter("faithmon")
        self._logger = self._logs.get_logger("faithmon")
        self._dimensions = tuple(dimensions)
        self._evaluations = meter.create_counter(
            "faithmon.evaluations", description="Evaluations written"
        )
        self._unsupported = meter.create_counter(
            "faithmon.records.unsupported", description="Records with an unsupported claim"
        )
        self._critical = meter.create_counter(
            "faithmon.records.critical_unsupported",
            description="Records with an unsupported critical claim",
        )
        self._errors = meter.create_counter("faithmon.judge.errors", description="judge_error")
        self._tokens = meter.create_counter("faithmon.judge.tokens", unit="{token}")
        self._faithfulness = meter.create_histogram(
            "faithmon.faithfulness", description="Strict faithfulness of scored records"
        )
        self._relevance = {
            name: meter.create_histogram(f"faithmon.{name}", description=description)
            for name, description in RELEVANCE.items()
        }

    def __call__(self, record: RagRecord, judgement: Judgement) -> None:
        attributes = {d: record.labels[d] for d in self._dimensions if record.labels.get(d)}
        attributes["judge"] = judgement.judge
        score = judgement.faithfulness
        self._evaluations.add(1, attributes)
        self._tokens.add(
            judgement.usage.prompt_tokens + judgement.usage.completion_tokens, attributes
        )
        if judgement.status == "judge_error":
            self._errors.add(1, attributes)
        if score is not None:
            self._faithfulness.record(score, attributes)
        if judgement.unsupported:
            self._unsupported.add(1, attributes)
        if judgement.critical_unsupported:
            self._critical.add(1, attributes)
        for name, value in _measured(judgement):
            self._relevance[name].record(value, attributes)
        self._emit(record, judgement)

    def _emit(self, record: RagRecord, judgement: Judgement) -> None:
        """One event per measure: faithfulness always, each relevance when measured."""
        score = judgement.faithfulness
        supported = sum(claim_supported(c.verdict) for c in judgement.claims)
        shared: Attributes = {
            "faithmon.judge": judgement.judge,
            "faithmon.status": judgement.status,
        }
        relevance = judgement.relevance
        cause = relevance.cause if relevance is not None else None
        if cause is not None:
            shared["faithmon.cause"] = cause
        if relevance is not None and relevance.abstention is not None:
            shared["faithmon.abstention"] = relevance.abstention
        faithfulness: Attributes = {
            **shared,
            "gen_ai.evaluation.name": EVALUATION_NAME,
            "gen_ai.evaluation.explanation": (
                f"{supported} of {len(judgement.claims)} claims supported"
                if score is not None
                else f"not scored: {judgement.status}"
            ),
        }
        if score is not None:
            faithfulness["gen_ai.evaluation.score.value"] = score
            faithfulness["gen_ai.evaluation.score.label"] = (
                "unfaithful" if judgement.unsupported else "faithful"
            )
        events = [faithfulness]
        for name, value in _measured(judgement):
            measure: Attributes = {
                **shared,
                "gen_ai.evaluation.name": name,
                "gen_ai.evaluation.score.value": value,
                "gen_ai.evaluation.score.label": "relevant" if value >= RELEVANT else "irrelevant",
            }
            if cause is not None:
                measure["gen_ai.evaluation.explanation"] = f"unfaithful answer; cause: {cause}"
            events.append(measure)
        context = self._context(record)
        for attributes in events:
            self._logger.emit(event_name=EVENT, attributes=attributes, context=context)

    @staticmethod
    def _context(record: RagRecord) -> Context | None:
        if not record.root_span_id:
            return None
        span = SpanContext(
            trace_id=int(record.trace_id, 16),
            span_id=int(record.root_span_id, 16),
            is_remote=True,
            trace_flags=TraceFlags(TraceFlags.SAMPLED),
        )
        return set_span_in_context(NonRecordingSpan(span))

    def flush(self) -> None:
        self._logs.force_flush()
        self._metrics.force_flush()

    def shutdown(self) -> None:
        self._logs.shutdown()
        self._metrics.shutdown()


def _measured(judgement: Judgement) -> list[tuple[str, float]]:
    """The relevance measures the judge gave, by name."""
    relevance = judgement.relevance
    if relevance is None:
        return []
    values = ((name, getattr(relevance, name)) for name in RELEVANCE)
    return [(name, value) for name, value in values if value is not None]
