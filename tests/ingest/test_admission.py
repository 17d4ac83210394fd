"""Admission is one step: concurrent requests never take the buffer past its bounds,
though each request's spool write (its fsync) runs outside the pipeline's lock."""

from __future__ import annotations

import threading
from collections.abc import Iterable, Sequence
from pathlib import Path

import pytest

from faithmon.errors import SaturatedError
from faithmon.ingest.assemble import measure
from faithmon.ingest.pipeline import Pipeline
from faithmon.ingest.sampler import KeepAll
from faithmon.ingest.scrub import identity
from faithmon.ingest.spans import IngestSpan
from faithmon.ingest.spool import Spool
from faithmon.model import RagRecord

CLIENTS = 16


class GatedSpool(Spool):
    """A real spool whose appends wait at a barrier that every client reaches once (in
    ``append`` when admitted, after its 503 when refused): every request is checked
    before any is added, the widest window a slow disk opens."""

    def __init__(self, directory: Path, parties: int) -> None:
        super().__init__(directory, max_bytes=1 << 30)
        self.gate = threading.Barrier(parties, timeout=30)

    def append(self, payload: bytes, traces: Iterable[str]) -> None:
        self.gate.wait()
        super().append(payload, traces)


class FailingSpool(Spool):
    """A real spool whose next append fails as a full disk does."""

    failing = True

    def append(self, payload: bytes, traces: Iterable[str]) -> None:
        if self.failing:
            self.failing = False
            raise SaturatedError("the spool cannot be written (No space left on device)")
        super().append(payload, traces)


def ignore(records: Sequence[RagRecord]) -> None:
    """A store that takes anything (nothing is built in these tests)."""


def request(client: int, traces: int, spans: int, text: str = "") -> list[IngestSpan]:
    """``spans`` root spans of ``traces`` traces of their own for one client."""
    return [
        IngestSpan(
            f"{client:016x}{n % traces:016x}",
            f"{client:08x}{n:08x}",
            None,
            "rag",
            0,
            1,
            {"input.value": text} if text else {},
        )
        for n in range(spans)
    ]


# bounds; spans, traces and text per request; why the next request is refused.
CASES = {
    "spans": ({"max_items": 20}, 4, 1, "", "20 spans wait"),
    "traces": ({"max_traces": 20}, 2, 2, "", "18 traces wait"),
    "bytes": ({"max_bytes": 50_000}, 1, 1, "x" * 10_000, "MB of spans wait"),
}


@pytest.mark.parametrize("case", CASES)
def test_concurrent_requests_stay_within_the_bounds(tmp_path: Path, case: str) -> None:
    """16 requests pass the check together: only those that fit are admitted, and the
    buffer holds no more than its bounds allow (bytes: under the cap before the last
    admitted request, as for one request at a time)."""
    bounds, spans, traces, text, why = CASES[case]
    limits = {"max_items": 10_000, "max_traces": 1_000, "max_bytes": 1 << 30, **bounds}
    spool = GatedSpool(tmp_path, CLIENTS)
    pipeline = Pipeline(
        ignore,
        sampler=KeepAll(),
        scrubber=identity,
        clock=lambda: 0,
        spool=spool,
        max_items=limits["max_items"],
        max_traces=limits["max_traces"],
        max_bytes=limits["max_bytes"],
    )
    requests = [request(client, traces, spans, text) for client in range(CLIENTS)]
    admitted: list[int] = []
    refused: list[int] = []

    def client(n: int) -> None:
        try:
            pipeline.submit(requests[n])
        except SaturatedError:
            refused.append(n)
            spool.gate.wait()
        else:
            admitted.append(n)

    threads = [threading.Thread(target=client, args=(n,)) for n in range(CLIENTS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert len(admitted) + len(refused) == CLIENTS
    assembler = pipeline._assembler
    assert assembler.items_in_flight <= limits["max_items"]
    assert len(assembler) <= limits["max_traces"] * 0.9 and assembler.evicted_total == 0
    one_request = max(measure(requests[n]).bytes for n in admitted)
    assert assembler.bytes_in_flight < limits["max_bytes"] + one_request
    assert assembler.items_in_flight == sum(len(requests[n]) for n in admitted)
    assert admitted and refused
    assert why in (pipeline._full(measure(request(99, traces, spans, text))) or "")
    spool.close()


def test_a_failed_spool_write_gives_its_room_back(tmp_path: Path) -> None:
    """A request whose spool write fails is not buffered, and the room it reserved is
    free again for the next one."""
    spool = FailingSpool(tmp_path, max_bytes=1 << 30)
    pipeline = Pipeline(
        ignore, sampler=KeepAll(), scrubber=identity, clock=lambda: 0, spool=spool, max_items=4
    )
    with pytest.raises(SaturatedError, match="cannot be written"):
        pipeline.submit(request(1, 1, 4))
    assert pipeline._assembler.items_in_flight == 0
    pipeline.submit(request(2, 1, 4))
    assert pipeline._assembler.items_in_flight == 4
    spool.close()
