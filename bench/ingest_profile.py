"""Where an ingest trace's time goes: each step of the pipeline timed alone over the
bench's payload, on one thread of the bench process, in microseconds per trace.

decode (OTLP protobuf to spans), spool (the entry the receiver fsyncs before it
answers: encoded only, the fsync is the disk's), assemble, extract, sample, scrub
(the PII scrubber, then made storable), insert (``writes.save_records`` in batches of
500, one transaction each: the records, their chunk rows and their document rows).
The insert is timed on SQLite and, when given, PostgreSQL.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TypeVar

from common import SCRUB_KEY
from ingest_payload import Payload

from faithmon.ingest import otlp
from faithmon.ingest.assemble import TraceAssembler
from faithmon.ingest.extract import extract
from faithmon.ingest.sampler import PolicySampler, SamplingPolicy
from faithmon.ingest.scrub import PiiScrubber
from faithmon.ingest.spool import encode
from faithmon.ingest.storable import storable
from faithmon.model import RagRecord
from faithmon.store import engine as store_engine
from faithmon.store import writes

STAGES = ("decode", "spool", "assemble", "extract", "sample", "scrub")
BATCH = 500
T = TypeVar("T")


def _timed(seconds: dict[str, float], stage: str, work: Callable[[], T]) -> T:
    started = time.perf_counter()
    result = work()
    seconds[stage] = seconds.get(stage, 0.0) + time.perf_counter() - started
    return result


def _insert(url: str, records: Sequence[RagRecord]) -> float:
    engine = store_engine.make_engine(url)
    try:
        store_engine.upgrade(engine)
        sessions = store_engine.session_factory(engine)
        stats = writes.WriteStats()
        started = time.perf_counter()
        for start in range(0, len(records), BATCH):
            writes.save_records(sessions, records[start : start + BATCH], stats)
        return time.perf_counter() - started
    finally:
        engine.dispose()


def breakdown(payload: Payload, postgres_url: str | None) -> dict[str, float]:
    """Microseconds per trace for each step; ``insert_sqlite`` and ``insert_postgres``."""
    seconds: dict[str, float] = {}
    batches = [
        _timed(seconds, "decode", lambda b=b: otlp.decode_traces(b)[0]) for b in payload.bodies
    ]
    for spans in batches:
        _timed(seconds, "spool", lambda s=spans: encode(s))
    assembler = TraceAssembler(0.0, payload.traces + 1)
    for spans in batches:
        _timed(seconds, "assemble", lambda s=spans: assembler.add(s))
    traces = _timed(seconds, "assemble", assembler.pop_all)
    built = _timed(seconds, "extract", lambda: [extract(t.items) for t in traces])
    records = [r for r in built if r is not None]
    sampler = PolicySampler(SamplingPolicy())
    decisions = _timed(seconds, "sample", lambda: [sampler.keep(r) for r in records])
    scrubber = PiiScrubber(SCRUB_KEY.encode(), "US")
    kept = _timed(
        seconds,
        "scrub",
        lambda: [
            storable(replace(scrubber(r), sample_reason=d.reason))
            for r, d in zip(records, decisions, strict=True)
        ],
    )
    with tempfile.TemporaryDirectory(prefix="faithmon-ingest-profile-") as folder:
        seconds["insert_sqlite"] = _insert(f"sqlite:///{Path(folder) / 'profile.db'}", kept)
    if postgres_url:
        seconds["insert_postgres"] = _insert(postgres_url, kept)
    return {stage: value / payload.traces * 1e6 for stage, value in seconds.items()}


def render_breakdown(rows: dict[str, dict[str, float]]) -> str:
    """One column per payload: µs per trace by step, and each step's share of the total
    on SQLite."""
    names = list(rows)
    stages = [*STAGES, "insert_sqlite", "insert_postgres"]
    lines = ["time per trace by step (µs, one thread; share of the SQLite total)"]
    lines.append(f"{'step':<16}" + "".join(f"{name:>26}" for name in names))
    for stage in stages:
        if not any(stage in row for row in rows.values()):
            continue
        cells = []
        for name in names:
            row = rows[name]
            total = sum(row[s] for s in (*STAGES, "insert_sqlite") if s in row)
            value = row.get(stage)
            share = (
                f"{value / total:.0%}" if value is not None and stage != "insert_postgres" else ""
            )
            cells.append(f"{'' if value is None else f'{value:,.0f}':>19} {share:>6}")
        lines.append(f"{stage:<16}" + "".join(cells))
    return "\n".join(lines)
