"""Normalise what apps pass as retrieved chunks into one shape."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True)
class Chunk:
    """One retrieved chunk, exactly as passed to the generator."""

    text: str
    id: str | None = None
    score: float | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)


def to_chunk(item: object) -> Chunk:
    """Accept a string, a mapping with ``text`` (or ``content``/``page_content``), or a Chunk."""
    if isinstance(item, Chunk):
        return item
    if isinstance(item, str):
        return Chunk(text=item)
    if isinstance(item, Mapping):
        text = item.get("text", item.get("content", item.get("page_content")))
        if not isinstance(text, str):
            raise TypeError("a chunk mapping needs a 'text' string")
        raw_id = item.get("id")
        raw_score = item.get("score")
        metadata = item.get("metadata") or {}
        return Chunk(
            text=text,
            id=None if raw_id is None else str(raw_id),
            score=None if raw_score is None else float(raw_score),
            metadata=dict(metadata) if isinstance(metadata, Mapping) else {},
        )
    text = getattr(item, "page_content", None)
    if isinstance(text, str):  # LangChain-style Document objects
        metadata = getattr(item, "metadata", None) or {}
        return Chunk(text=text, metadata=dict(metadata) if isinstance(metadata, Mapping) else {})
    raise TypeError(f"cannot read a chunk from {type(item).__name__}")


def to_chunks(items: Iterable[object]) -> list[Chunk]:
    return [to_chunk(item) for item in items]


def metadata_json(metadata: Mapping[str, Any]) -> str:
    """OpenInference carries document metadata as a JSON string."""
    return json.dumps(metadata, default=str, sort_keys=True, ensure_ascii=False)
