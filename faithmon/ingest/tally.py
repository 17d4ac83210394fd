"""The sampler's decisions, counted per hour, segment and reason, saved in batches.

Every decision is tallied (kept and dropped alike), so the dashboard can say what
share of a segment was scored; a trace dropped for a reason worth looking up later
(not plain ``sampled_out``, which is recomputed from the id) is listed by id. The
segment is scrubbed like the record's labels before it is counted. Counts wait for the
store in a bounded map (``lru.py``): past its cap the least recently counted segment's
counts move to ``OTHER_SEGMENT`` of their hour, so totals stay whole through an outage.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import datetime

from ..model import (
    OTHER_SEGMENT,
    Decision,
    DroppedTrace,
    RagRecord,
    Sampler,
    SamplingTally,
    SaveSamplingFn,
    Scrubber,
    segment_key,
)
from .lru import Lru
from .quiet import Throttle
from .storable import storable_labels

logger = logging.getLogger(__name__)


@dataclass(slots=True)
class _Row:
    """One segment's counts of one hour, by reason."""

    segment: Mapping[str, str]
    counts: Counter[str]


class SamplingBook:
    def __init__(
        self,
        sampler: Sampler,
        scrubber: Scrubber,
        save: SaveSamplingFn | None,
        max_dropped: int,
        stats: Counter[str],
    ) -> None:
        self._sampler = sampler
        self._scrubber = scrubber
        self._save = save
        self._max_dropped = max_dropped
        self._stats = stats
        self._quiet = Throttle(logger)
        self._rows: Lru[tuple[datetime, str], _Row] = Lru("sampling counts")
        # Counts of rows that gave way, by hour. The hours are the records' clocks, so
        # this is bounded too: past its cap, the counts of the oldest hour are lost.
        self._other: Lru[datetime, Counter[str]] = Lru("sampling counts under other")
        self._dropped: list[DroppedTrace] = []

    def keep(self, record: RagRecord) -> str | None:
        """The sampler's reason to keep the record, or None (counted, and tallied)."""
        if record.late:
            self._stats["late_rebuilt"] += 1
        decision = self._sampler.keep(record)
        segment = self._segment_of(record, decision)
        self._tally(record, decision.reason, segment)
        if decision.keep:
            return decision.reason
        self._stats[decision.reason] += 1
        if decision.reason != "sampled_out":  # sampled_out is recomputed from the id
            self._dropped.append(
                DroppedTrace(record.trace_id, decision.reason, segment, record.started_at)
            )
        return None

    def _segment_of(self, record: RagRecord, decision: Decision) -> dict[str, str]:
        """The decision's segment as stored: scrubbed like the record's labels."""
        if not decision.segment:
            return {}
        scrub_labels = getattr(self._scrubber, "scrub_labels", None)
        if scrub_labels is not None:
            return storable_labels(scrub_labels(decision.segment))
        # Any other scrubber: scrub a record that carries nothing but the labels.
        bare = replace(record, question="", answer="", chunks=(), retrieved=(), generation={})
        labels = self._scrubber(replace(bare, labels=dict(decision.segment))).labels
        return storable_labels(labels)

    def _tally(self, record: RagRecord, reason: str, segment: Mapping[str, str]) -> None:
        if self._save is None:
            return
        hour = record.started_at.replace(minute=0, second=0, microsecond=0)
        key = (hour, segment_key(segment))
        row = self._rows.get(key)
        if row is None:
            row = _Row(dict(segment), Counter())
            gone = self._rows.put(key, row)
            if gone is not None:
                self._fold(gone[0][0], gone[1].counts)
        row.counts[reason] += 1

    def _fold(self, hour: datetime, counts: Counter[str]) -> None:
        other = self._other.get(hour)
        if other is None:
            other = Counter()
            lost = self._other.put(hour, other)
            if lost is not None:
                self._stats["sampling_counts_lost"] += lost[1].total()
        other.update(counts)

    def _tallies(self) -> list[SamplingTally]:
        merged: Counter[tuple[datetime, str, str]] = Counter()
        segments = {segment_key(OTHER_SEGMENT): OTHER_SEGMENT}
        for (hour, key), row in self._rows.items():
            segments[key] = row.segment
            for reason, count in row.counts.items():
                merged[(hour, key, reason)] += count
        for hour, counts in self._other.items():
            for reason, count in counts.items():
                merged[(hour, segment_key(OTHER_SEGMENT), reason)] += count
        return [
            SamplingTally(hour, segments[key], reason, count)
            for (hour, key, reason), count in merged.items()
        ]

    def save(self) -> None:
        if self._save is None or not (self._rows or self._other or self._dropped):
            return
        try:
            self._save(self._tallies(), self._dropped)
        except Exception as exc:
            # Kept for the next tick (bounded): sampling counts are not worth a 503.
            del self._dropped[: max(0, len(self._dropped) - self._max_dropped)]
            self._quiet.warning("s", "faithmon: saving sampling counts failed (%s)", exc)
            return
        self._rows.clear()
        self._other.clear()
        self._dropped = []
