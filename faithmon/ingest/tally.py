"""The sampler's decisions, counted per hour, segment and reason, saved in batches.

Every decision is tallied (kept and dropped alike), so the dashboard can say what
share of a segment was scored; a trace dropped for a reason worth looking up later
(not plain ``sampled_out``, which is recomputed from the id) is listed by id. The
segment is scrubbed like the record's labels before it is counted.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Mapping
from dataclasses import replace
from datetime import datetime

from ..model import (
    Decision,
    DroppedTrace,
    RagRecord,
    Sampler,
    SamplingTally,
    SaveSamplingFn,
    Scrubber,
    segment_key,
)
from .quiet import Throttle
from .storable import storable_labels

logger = logging.getLogger(__name__)


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
        self._tallies: Counter[tuple[datetime, str, str]] = Counter()
        self._segments: dict[str, Mapping[str, str]] = {}
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
        key = segment_key(segment)
        self._segments.setdefault(key, dict(segment))
        hour = record.started_at.replace(minute=0, second=0, microsecond=0)
        self._tallies[(hour, key, reason)] += 1

    def save(self) -> None:
        if self._save is None or not (self._tallies or self._dropped):
            return
        tallies = [
            SamplingTally(hour, self._segments[key], reason, count)
            for (hour, key, reason), count in self._tallies.items()
        ]
        try:
            self._save(tallies, self._dropped)
        except Exception as exc:
            # Kept for the next tick (bounded): sampling counts are not worth a 503.
            del self._dropped[: max(0, len(self._dropped) - self._max_dropped)]
            self._quiet.warning("s", "faithmon: saving sampling counts failed (%s)", exc)
            return
        self._tallies.clear()
        self._dropped = []
