"""``@retriever`` and ``@generator``: record what functions return into the current request.

Both work on plain and async functions and on sync and async generators (a
streaming generator's pieces are collected and recorded when it finishes).
Outside a ``rag_span`` they only call the function.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any, TypeVar, overload

from ._log import log_once
from ._span import RagSpan, current

F = TypeVar("F", bound=Callable[..., Any])
Recorder = Callable[[RagSpan, Any], None]


def _wrap(func: F, collect: Callable[[list[Any]], Any], record: Recorder) -> F:
    def save(rag: RagSpan | None, value: Any) -> None:
        if rag is None:
            return
        try:
            record(rag, value)
        except Exception:
            log_once(f"decorator-{func.__qualname__}", f"could not record {func.__qualname__}")

    if inspect.isasyncgenfunction(func):

        @functools.wraps(func)
        async def agen(*args: Any, **kwargs: Any) -> AsyncIterator[Any]:
            rag = current()
            pieces: list[Any] = []
            async for piece in func(*args, **kwargs):
                pieces.append(piece)
                yield piece
            save(rag, collect(pieces))

        return agen  # type: ignore[return-value]

    if inspect.isgeneratorfunction(func):

        @functools.wraps(func)
        def gen(*args: Any, **kwargs: Any) -> Iterator[Any]:
            rag = current()
            pieces: list[Any] = []
            for piece in func(*args, **kwargs):
                pieces.append(piece)
                yield piece
            save(rag, collect(pieces))

        return gen  # type: ignore[return-value]

    if inspect.iscoroutinefunction(func):

        @functools.wraps(func)
        async def coro(*args: Any, **kwargs: Any) -> Any:
            rag = current()
            result = await func(*args, **kwargs)
            save(rag, result)
            return result

        return coro  # type: ignore[return-value]

    @functools.wraps(func)
    def plain(*args: Any, **kwargs: Any) -> Any:
        rag = current()
        result = func(*args, **kwargs)
        save(rag, result)
        return result

    return plain  # type: ignore[return-value]


def _answer_text(value: Any) -> str:
    """A string, or an OpenAI-style chat completion's first message."""
    if isinstance(value, str):
        return value
    choices = getattr(value, "choices", None)
    if choices:
        content = getattr(getattr(choices[0], "message", None), "content", None)
        if isinstance(content, str):
            return content
    raise TypeError(f"cannot read an answer from {type(value).__name__}")


@overload
def retriever(func: F, /) -> F: ...
@overload
def retriever(*, name: str | None = None, version: str | None = None) -> Callable[[F], F]: ...
def retriever(
    func: F | None = None, /, *, name: str | None = None, version: str | None = None
) -> F | Callable[[F], F]:
    """Record the chunks a function returns (or yields) as the request's retrieval."""

    def decorate(f: F) -> F:
        def record(rag: RagSpan, chunks: Any) -> None:
            rag.record_retrieval(chunks, retriever=name or f.__name__, retriever_version=version)

        return _wrap(f, lambda pieces: pieces, record)

    return decorate(func) if func is not None else decorate


@overload
def generator(func: F, /) -> F: ...
@overload
def generator(*, model: str | None = None, **settings: Any) -> Callable[[F], F]: ...
def generator(
    func: F | None = None, /, *, model: str | None = None, **settings: Any
) -> F | Callable[[F], F]:
    """Record the answer a function returns (or streams, joined) as the request's answer."""

    def decorate(f: F) -> F:
        def record(rag: RagSpan, answer: Any) -> None:
            rag.record_answer(_answer_text(answer), model=model, **settings)

        return _wrap(f, lambda pieces: "".join(str(p) for p in pieces), record)

    return decorate(func) if func is not None else decorate
