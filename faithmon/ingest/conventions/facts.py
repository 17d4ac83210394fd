"""What one span tells about a RAG request, whatever convention wrote it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from ...model import Chunk

Role = Literal["request", "retrieval", "rerank", "context", "generation", "other"]


@dataclass(frozen=True, slots=True)
class Facts:
    convention: str
    role: Role
    question: str | None = None
    answer: str | None = None
    documents: tuple[Chunk, ...] | None = None
    """The chunks this span carries; None when it carries none."""
    problem: str | None = None
    """Why those chunks cannot be trusted whole (cut, dropped, unparseable)."""
    model: str | None = None
    generation: Mapping[str, Any] = field(default_factory=dict)
    labels: Mapping[str, str] = field(default_factory=dict)
    keep: str | None = None
    expected: Mapping[Role, int] = field(default_factory=dict)
    """On a request span: how many child spans of each role were emitted."""
    expected_chunks: int | None = None
    """On a request span: how many chunks those child spans carried in all."""
