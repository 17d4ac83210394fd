"""Records for the store tests."""

from __future__ import annotations

from datetime import timedelta

from faithmon.model import Chunk, RagRecord
from tests.timing import days_ago

T0 = days_ago(1, hour=12)


def make_record(n: int, chunks: int = 1, **labels: str) -> RagRecord:
    return RagRecord(
        trace_id=f"{n:032x}",
        question=f"question {n}",
        answer="Order A17 shipped on 3 March.",
        chunks=tuple(
            Chunk(position=i, text=f"chunk {i}", id=f"doc-{i}", score=0.5, metadata={"k": i})
            for i in range(chunks)
        ),
        labels=labels or {"route": "billing"},
        started_at=T0 + timedelta(minutes=n),
    )
