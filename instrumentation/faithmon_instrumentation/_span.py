"""``rag_span``: one request span with retrieval and generation children."""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from opentelemetry import trace
from opentelemetry.trace import Span, Status, StatusCode

from . import _setup
from . import attributes as attr
from ._chunks import Chunk, metadata_json, to_chunks

logger = logging.getLogger(__name__)

LabelValue = str | int | float | bool


class RagSpan:
    """Handle yielded by :func:`rag_span`. Its methods never raise into the app."""

    def __init__(self, span: Span, question: str) -> None:
        self._span = span
        self._question = question

    @property
    def span(self) -> Span:
        return self._span

    def set_label(self, name: str, value: LabelValue) -> None:
        """Attach a segment label (route, tenant, prompt version, ...)."""
        try:
            self._span.set_attribute(attr.LABEL_PREFIX + name, value)
        except Exception:
            logger.exception("faithmon_instrumentation: set_label failed")

    def record_retrieval(
        self,
        chunks: Iterable[object],
        retriever: str | None = None,
        retriever_version: str | None = None,
    ) -> None:
        """Record the chunks, in the order they are passed to the generator."""
        try:
            self._record_retrieval(to_chunks(chunks), retriever, retriever_version)
        except Exception:
            logger.exception("faithmon_instrumentation: record_retrieval failed")

    def record_answer(self, answer: str, model: str | None = None) -> None:
        """Record the final answer and the model that wrote it."""
        try:
            self._record_answer(answer, model)
        except Exception:
            logger.exception("faithmon_instrumentation: record_answer failed")

    def _record_retrieval(
        self, chunks: list[Chunk], retriever: str | None, retriever_version: str | None
    ) -> None:
        span = _setup.tracer().start_span(attr.SPAN_RETRIEVAL)
        try:
            attributes: dict[str, Any] = {}
            for i, chunk in enumerate(chunks):
                attributes[attr.document_key(i, attr.DOCUMENT_CONTENT)] = chunk.text
                if chunk.id is not None:
                    attributes[attr.document_key(i, attr.DOCUMENT_ID)] = chunk.id
                if chunk.score is not None:
                    attributes[attr.document_key(i, attr.DOCUMENT_SCORE)] = chunk.score
                if chunk.metadata:
                    attributes[attr.document_key(i, attr.DOCUMENT_METADATA)] = metadata_json(
                        chunk.metadata
                    )
            if retriever:
                attributes[attr.RETRIEVER_NAME] = retriever
            if retriever_version:
                attributes[attr.RETRIEVER_VERSION] = retriever_version
            attributes[attr.DOCUMENT_COUNT] = len(chunks)
            attributes[attr.GEN_AI_OPERATION_NAME] = "retrieval"
            # Kind, role and query go last: an SDK that hits its attribute
            # limit evicts the oldest keys, and these are the ones we need most.
            attributes[attr.GEN_AI_RETRIEVAL_QUERY_TEXT] = self._question
            attributes[attr.INPUT_VALUE] = self._question
            attributes[attr.FAITHMON_ROLE] = attr.ROLE_RETRIEVAL
            attributes[attr.OI_SPAN_KIND] = attr.OI_KIND_RETRIEVER
            span.set_attributes(attributes)
        finally:
            span.end()

    def _record_answer(self, answer: str, model: str | None) -> None:
        span = _setup.tracer().start_span(attr.SPAN_GENERATION)
        try:
            attributes: dict[str, Any] = {
                attr.GEN_AI_OPERATION_NAME: "chat",
                f"{attr.LLM_OUTPUT_MESSAGES}.0.{attr.MESSAGE_ROLE}": "assistant",
                f"{attr.LLM_OUTPUT_MESSAGES}.0.{attr.MESSAGE_CONTENT}": answer,
            }
            if model:
                attributes[attr.LLM_MODEL_NAME] = model
                attributes[attr.GEN_AI_REQUEST_MODEL] = model
            attributes[attr.OUTPUT_VALUE] = answer
            attributes[attr.FAITHMON_ROLE] = attr.ROLE_GENERATION
            attributes[attr.OI_SPAN_KIND] = attr.OI_KIND_LLM
            span.set_attributes(attributes)
        finally:
            span.end()
        self._span.set_attribute(attr.OUTPUT_VALUE, answer)


def _label_attributes(labels: Mapping[str, object]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, value in labels.items():
        if value is None:
            continue
        if not isinstance(value, str | int | float | bool):
            value = str(value)
        out[attr.LABEL_PREFIX + name] = value
    return out


@contextmanager
def rag_span(question: str, **labels: object) -> Iterator[RagSpan]:
    """Open the span of one RAG request; labels become segment labels.

    An exception raised by the app inside the block is recorded on the span and
    propagates unchanged; the shim's own failures are logged and swallowed.
    """
    try:
        span = _setup.tracer().start_span(attr.SPAN_REQUEST)
        span.set_attributes(_label_attributes(labels))
        span.set_attribute(attr.FAITHMON_ROLE, attr.ROLE_REQUEST)
        span.set_attribute(attr.INPUT_VALUE, question)
        span.set_attribute(attr.OI_SPAN_KIND, attr.OI_KIND_CHAIN)
    except Exception:
        logger.exception("faithmon_instrumentation: could not start the request span")
        span = trace.INVALID_SPAN
    with trace.use_span(
        span, end_on_exit=False, record_exception=False, set_status_on_exception=False
    ):
        try:
            yield RagSpan(span, question)
        except BaseException as exc:
            try:
                span.record_exception(exc)
                span.set_status(Status(StatusCode.ERROR, type(exc).__name__))
            finally:
                span.end()
            raise
    try:
        span.end()
    except Exception:
        logger.exception("faithmon_instrumentation: could not end the request span")
