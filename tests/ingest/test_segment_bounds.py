"""Per-segment state is bounded by MAX_SEGMENTS, not by the label values clients send:
a label with an id in every value costs no more memory after 100,000 values than after
1,000, and what does not fit is counted under the ``other`` segment."""

from __future__ import annotations

import gc
import logging
from collections.abc import Sequence

import pytest

from faithmon.ingest.lru import MAX_SEGMENTS, OTHER_KEY, Lru
from faithmon.ingest.pipeline import Pipeline
from faithmon.ingest.sampler import PolicySampler, SamplingPolicy
from faithmon.ingest.scrub import identity
from faithmon.ingest.spans import IngestSpan
from faithmon.ingest.storable import LABEL_KEY_CHARS, storable_labels
from faithmon.model import OTHER_SEGMENT, DroppedTrace, RagRecord, SamplingTally, segment_key
from tests.timing import days_ago

BATCH = 500
RESOURCE = {"service.name": "support-bot"}


class CountingStore:
    """Counts the records it is given and keeps none: memory shows what ingest holds."""

    def __init__(self) -> None:
        self.records = 0

    def __call__(self, records: Sequence[RagRecord]) -> None:
        self.records += len(records)


class SamplingStore:
    """Sampling counts by (segment key, reason); ``down`` fails saves (an outage)."""

    def __init__(self) -> None:
        self.down = True
        self.counts: dict[tuple[str, str], int] = {}

    def __call__(self, tallies: Sequence[SamplingTally], dropped: Sequence[DroppedTrace]) -> None:
        if self.down:
            raise ConnectionError("database is down")
        for tally in tallies:
            key = (segment_key(tally.segment), tally.reason)
            self.counts[key] = self.counts.get(key, 0) + tally.count


def root(n: int) -> IngestSpan:
    """A one-span RAG trace whose route label is new with every ``n``."""
    attributes = {
        "faithmon.role": "request",
        "openinference.span.kind": "CHAIN",
        "input.value": "Where is my order?",
        "output.value": "It shipped.",
        "faithmon.label.route": f"/orders/{n:08d}",
    }
    return IngestSpan(f"{n + 1:032x}", f"{n + 1:016x}", None, "rag", n, n + 1, attributes, RESOURCE)


def rss_kb() -> int:
    gc.collect()
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise AssertionError("no VmRSS in /proc/self/status")


def test_state_stays_flat_across_100000_route_values(caplog: pytest.LogCaptureFixture) -> None:
    """100,000 distinct routes through the pipeline and the real sampler, with the store
    down for sampling counts all along: every per-segment map stays within its cap, RSS
    after 100,000 is within 10% of RSS after 1,000, and the counts saved once the store is
    back add up to every record, the overflow under the ``other`` segment."""
    caplog.set_level(logging.WARNING, logger="faithmon.ingest.lru")
    sampling = SamplingStore()
    store = CountingStore()
    sampler = PolicySampler(SamplingPolicy(rate_limit=5.0, keep_rules=frozenset()))
    pipeline = Pipeline(
        store,
        sampler=sampler,
        scrubber=identity,
        quiet_seconds=0,
        save_sampling=sampling,
        max_backlog=1_000,  # the dropped traces listed through the outage: a bound of its own
    )
    book = pipeline._book

    def feed(first: int, last: int) -> None:
        for start in range(first, last, BATCH):
            pipeline.submit([root(n) for n in range(start, min(last, start + BATCH))])
            pipeline.flush_all()

    feed(0, 1_000)
    after_1k = rss_kb()
    feed(1_000, 100_000)
    after_100k = rss_kb()
    sizes = {"rate buckets": len(sampler._buckets), "sampling counts": len(book._rows)}
    print(f"RSS after 1,000 routes: {after_1k} kB, after 100,000: {after_100k} kB; {sizes}")
    assert all(size <= MAX_SEGMENTS for size in sizes.values()), sizes
    assert after_100k <= after_1k * 1.1
    said = [r.getMessage() for r in caplog.records if "reached" in r.getMessage()]
    assert len(said) == 2  # once per map, however many segments follow

    sampling.down = False
    pipeline.flush_all()
    assert sum(sampling.counts.values()) == 100_000
    assert sum(n for (key, _), n in sampling.counts.items() if key == OTHER_KEY) > 90_000
    assert store.records + pipeline.stats["rate_limited"] == 100_000


def test_the_hourly_minimum_keeps_a_flood_of_new_segments_as_one() -> None:
    """With a minimum per hour, each new route would be kept for its minimum: past the
    cap, new routes share the ``other`` segment's count, so a flood is not all kept."""
    sampler = PolicySampler(SamplingPolicy(rate=0.0, minimum_per_hour=1, keep_rules=frozenset()))
    at = days_ago(2, hour=12)
    kept = 0
    for n in range(100_000):
        labels = {"service": "support-bot", "route": f"/orders/{n:08d}"}
        record = RagRecord(f"{n + 1:032x}", "q", "a", (), labels, at)
        kept += sampler.keep(record).keep
    assert len(sampler._kept) <= MAX_SEGMENTS
    assert kept == MAX_SEGMENTS + 1  # the first routes' minimum, then other's


def test_the_other_segment_is_stored_like_any_segment() -> None:
    """``other`` survives storable_labels unchanged and its key fits the key column."""
    assert storable_labels(OTHER_SEGMENT) == dict(OTHER_SEGMENT)
    assert all(len(name) <= LABEL_KEY_CHARS for name in OTHER_SEGMENT)
    assert OTHER_KEY == segment_key(OTHER_SEGMENT) == "segment=other"


def test_a_spent_entry_makes_room_else_the_newcomer_shares_other() -> None:
    """At the cap the least recently used entry gives way only when spent."""
    lru: Lru[str, int] = Lru("test", cap=2)
    lru.put("a", 1)
    lru.put("b", 2)
    lru.get("a")  # "b" is now the least recently used
    assert lru.room_for("c", OTHER_KEY, lambda key, _: key == "b") == "c"
    assert [key for key, _ in lru.items()] == ["a"]
    lru.put("c", 3)
    assert lru.room_for("d", OTHER_KEY, lambda key, _: False) == OTHER_KEY
    assert lru.put(OTHER_KEY, 4) == ("a", 1)
