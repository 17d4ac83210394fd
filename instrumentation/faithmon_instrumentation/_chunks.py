"""Normalise what apps pass as retrieved chunks into one shape."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

# (text, id, score, metadata): a plain tuple, because building a dataclass per
# chunk on the app's request path costs more than the span attributes do.
Doc = tuple[str, str | None, float | None, Mapping[str, Any]]

_EMPTY: Mapping[str, Any] = {}


@dataclass(frozen=True, slots=True)
class Chunk:
    """One retrieved chunk, exactly as passed to the generator."""

    text: str
    id: str | None = None
    score: float | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)


def _from_mapping(item: Mapping[str, Any]) -> Doc:
    text = item.get("text")
    if text is None:
        text = item.get("content", item.get("page_content"))
    if not isinstance(text, str):
        raise TypeError("a chunk mapping needs a 'text' string")
    raw_id = item.get("id")
    raw_score = item.get("score")
    metadata = item.get("metadata") or _EMPTY
    return (
        text,
        None if raw_id is None else str(raw_id),
        None if raw_score is None else float(raw_score),
        metadata if isinstance(metadata, Mapping) else _EMPTY,
    )


def to_doc(item: object) -> Doc:
    """Accept a string, a mapping with ``text`` (or ``content``/``page_content``), a Chunk,
    or a LangChain-style document with ``page_content`` and ``metadata``."""
    kind = type(item)
    if kind is str:
        return (item, None, None, _EMPTY)  # type: ignore[return-value]
    if kind is dict:
        return _from_mapping(item)  # type: ignore[arg-type]
    if isinstance(item, Chunk):
        return (item.text, item.id, item.score, item.metadata)
    if isinstance(item, str):
        return (str(item), None, None, _EMPTY)
    if isinstance(item, Mapping):
        return _from_mapping(item)
    text = getattr(item, "page_content", None)
    if isinstance(text, str):
        metadata = getattr(item, "metadata", None) or _EMPTY
        return (text, None, None, metadata if isinstance(metadata, Mapping) else _EMPTY)
    raise TypeError(f"cannot read a chunk from {type(item).__name__}")


def to_docs(items: Iterable[object]) -> list[Doc]:
    return [to_doc(item) for item in items]


def metadata_json(metadata: Mapping[str, Any]) -> str:
    """OpenInference carries document metadata as a JSON string."""
    return json.dumps(metadata, default=str, sort_keys=True, ensure_ascii=False)
