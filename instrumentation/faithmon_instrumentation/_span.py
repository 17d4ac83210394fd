"""``rag_span``: one request span, with retrieval, rerank, context and generation children.

Child spans are parented explicitly on their request span, so a RagSpan handed
to another thread or task still records into its own trace, and concurrent
requests never mix their chunks.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from types import TracebackType
from typing import Any

from opentelemetry import context, trace
from opentelemetry.trace import Span, Status, StatusCode

from . import _setup
from . import attributes as attr
from ._chunks import to_docs
from ._documents import document_attributes
from ._log import log_once

LabelValue = str | int | float | bool
_RAG_KEY = context.create_key("faithmon-rag-span")


def _label_attributes(labels: Mapping[str, object]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, value in labels.items():
        if value is None:
            continue
        if not isinstance(value, str | int | float | bool):
            value = str(value)
        out[attr.LABEL_PREFIX + name] = value
    return out


class RagSpan:
    """Handle of one RAG request. Its methods never raise into the app."""

    def __init__(self, span: Span, question: str) -> None:
        self._span = span
        self._question = question
        # (role, chunk count) per documents span emitted; list.append is atomic,
        # so a RagSpan shared across threads still counts every span.
        self._emitted: list[tuple[str, int]] = []

    @property
    def span(self) -> Span:
        return self._span

    @property
    def trace_id(self) -> str:
        """The request's trace id as 32 hex digits (what ``record_feedback`` takes)."""
        return f"{self._span.get_span_context().trace_id:032x}"

    def set_label(self, name: str, value: LabelValue) -> None:
        """Attach a segment label (route, tenant, prompt version, language, ...)."""
        try:
            self._span.set_attributes(_label_attributes({name: value}))
        except Exception:
            log_once("set_label", "set_label failed")

    def keep(self, reason: str = "app") -> None:
        """Ask faithmon to keep this trace whatever the sample rate."""
        try:
            self._span.set_attribute(attr.KEEP, reason or "app")
        except Exception:
            log_once("keep", "keep failed")

    def record_retrieval(
        self,
        chunks: Iterable[object],
        retriever: str | None = None,
        retriever_version: str | None = None,
    ) -> None:
        """Record retrieved chunks in rank order."""
        try:
            extra = {
                attr.RETRIEVER_NAME: retriever,
                attr.RETRIEVER_VERSION: retriever_version,
                attr.GEN_AI_OPERATION_NAME: "retrieval",
                attr.GEN_AI_RETRIEVAL_QUERY_TEXT: self._question,
            }
            self._documents_span(
                attr.SPAN_RETRIEVAL,
                attr.ROLE_RETRIEVAL,
                attr.OI_KIND_RETRIEVER,
                attr.RETRIEVAL_DOCUMENTS,
                chunks,
                extra,
            )
        except Exception:
            log_once("record_retrieval", "record_retrieval failed")

    def record_rerank(
        self,
        chunks: Iterable[object],
        reranker: str | None = None,
        reranker_version: str | None = None,
    ) -> None:
        """Record the chunks after reranking or filtering, in their new order."""
        try:
            extra = {
                attr.RERANKER_NAME: reranker,
                attr.RERANKER_MODEL_NAME: reranker,
                attr.RERANKER_VERSION: reranker_version,
                attr.RERANKER_QUERY: self._question,
            }
            self._documents_span(
                attr.SPAN_RERANK,
                attr.ROLE_RERANK,
                attr.OI_KIND_RERANKER,
                attr.RERANKER_OUTPUT_DOCUMENTS,
                chunks,
                extra,
            )
        except Exception:
            log_once("record_rerank", "record_rerank failed")

    def record_context(self, chunks: Iterable[object]) -> None:
        """Name the exact chunks passed to the generator; they are what gets judged."""
        try:
            self._documents_span(
                attr.SPAN_CONTEXT,
                attr.ROLE_CONTEXT,
                attr.OI_KIND_CHAIN,
                attr.RETRIEVAL_DOCUMENTS,
                chunks,
                {},
            )
        except Exception:
            log_once("record_context", "record_context failed")

    def record_answer(self, answer: str, model: str | None = None, **settings: Any) -> None:
        """Record the final answer, the model and its settings (temperature=0.2, seed=7, ...)."""
        try:
            self._record_answer(answer, model, settings)
        except Exception:
            log_once("record_answer", "record_answer failed")

    def _child(self, name: str) -> Span:
        parent = trace.set_span_in_context(self._span)
        return _setup.tracer().start_span(name, context=parent)

    def _documents_span(
        self,
        name: str,
        role: str,
        kind: str,
        prefix: str,
        chunks: Iterable[object],
        extra: Mapping[str, Any],
    ) -> None:
        normalised = to_docs(chunks)
        span = self._child(name)
        try:
            attributes = document_attributes(span, normalised, prefix)
            attributes.update({k: v for k, v in extra.items() if v is not None})
            # Role, kind and query go last: an SDK at its attribute limit evicts
            # the oldest keys, and these are the ones the backend needs most.
            attributes[attr.INPUT_VALUE] = self._question
            attributes[attr.FAITHMON_ROLE] = role
            attributes[attr.OI_SPAN_KIND] = kind
            span.set_attributes(attributes)
            if span.is_recording():
                self._emitted.append((role, len(normalised)))
        finally:
            span.end()

    def _counts(self) -> dict[str, int]:
        """The request span's tally of its documents spans, set as it ends."""
        emitted = list(self._emitted)
        return {
            attr.REQUEST_RETRIEVALS: sum(role == attr.ROLE_RETRIEVAL for role, _ in emitted),
            attr.REQUEST_RERANKS: sum(role == attr.ROLE_RERANK for role, _ in emitted),
            attr.REQUEST_CONTEXTS: sum(role == attr.ROLE_CONTEXT for role, _ in emitted),
            attr.REQUEST_CHUNKS: sum(count for _, count in emitted),
        }

    def _record_answer(self, answer: str, model: str | None, settings: Mapping[str, Any]) -> None:
        if not isinstance(answer, str):
            raise TypeError(f"the answer must be a string, not {type(answer).__name__}")
        span = self._child(attr.SPAN_GENERATION)
        try:
            attributes: dict[str, Any] = {
                attr.GEN_AI_OPERATION_NAME: "chat",
                f"{attr.LLM_OUTPUT_MESSAGES}.0.{attr.MESSAGE_ROLE}": "assistant",
                f"{attr.LLM_OUTPUT_MESSAGES}.0.{attr.MESSAGE_CONTENT}": answer,
            }
            if model:
                attributes[attr.LLM_MODEL_NAME] = model
                attributes[attr.GEN_AI_REQUEST_MODEL] = model
            if settings:
                attributes[attr.LLM_INVOCATION_PARAMETERS] = json.dumps(
                    settings, default=str, sort_keys=True
                )
                for key, value in settings.items():
                    if isinstance(value, str | int | float | bool):
                        attributes[attr.GEN_AI_REQUEST_PREFIX + key] = value
            attributes[attr.OUTPUT_VALUE] = answer
            attributes[attr.FAITHMON_ROLE] = attr.ROLE_GENERATION
            attributes[attr.OI_SPAN_KIND] = attr.OI_KIND_LLM
            span.set_attributes(attributes)
        finally:
            span.end()
        self._span.set_attribute(attr.OUTPUT_VALUE, answer)


class _NoRag(RagSpan):
    """Stands in when the request span could not be started: records nothing."""

    def __init__(self) -> None:
        super().__init__(trace.INVALID_SPAN, "")


def current() -> RagSpan | None:
    """The RagSpan of the request being served in this context, if any."""
    value = context.get_value(_RAG_KEY)
    return value if isinstance(value, RagSpan) else None


class rag_span:  # lower case: it reads as a function, ``with rag_span(q) as rag``
    """Open the span of one RAG request; keyword labels become segment labels.

    Works with ``with`` and ``async with``. An exception raised by the app inside
    the block is recorded on the span and propagates unchanged; the shim's own
    failures are logged once and swallowed.
    """

    def __init__(self, question: str, **labels: object) -> None:
        self._question = question
        self._labels = labels
        self._rag: RagSpan = _NoRag()
        self._token: object | None = None

    def __enter__(self) -> RagSpan:
        try:
            span = _setup.tracer().start_span(attr.SPAN_REQUEST)
            attributes = _label_attributes(self._labels)
            attributes[attr.FAITHMON_ROLE] = attr.ROLE_REQUEST
            attributes[attr.INPUT_VALUE] = self._question
            attributes[attr.OI_SPAN_KIND] = attr.OI_KIND_CHAIN
            span.set_attributes(attributes)
            self._rag = RagSpan(span, self._question)
            ctx = context.set_value(_RAG_KEY, self._rag, trace.set_span_in_context(span))
            self._token = context.attach(ctx)
        except Exception:
            log_once("rag_span-start", "could not start the request span")
        return self._rag

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        try:
            span = self._rag.span
            if span.is_recording():
                span.set_attributes(self._rag._counts())
            if exc is not None:
                span.record_exception(exc)
                span.set_status(Status(StatusCode.ERROR, exc_type.__name__ if exc_type else ""))
            span.end()
        except Exception:
            log_once("rag_span-end", "could not end the request span")
        finally:
            if self._token is not None:
                try:
                    context.detach(self._token)  # type: ignore[arg-type]
                except Exception:
                    log_once("rag_span-detach", "could not restore the context")
                self._token = None

    async def __aenter__(self) -> RagSpan:
        return self.__enter__()

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.__exit__(exc_type, exc, tb)
