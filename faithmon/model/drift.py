"""What drift detection works on: outcomes, baselines and their frozen windows, signals."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal, TypeVar

from .judgement import Cause, Claim, retrieval_missed

Stream = Literal["unsupported", "critical", "citation", "retrieval"]


"""What drift watches per segment: records with an unsupported claim, or a critical one;
of the records whose answer cites, those with a wrong or unresolved citation; and, of
the records whose context relevance was measured, those whose retrieval missed
(:func:`faithmon.model.judgement.retrieval_missed`)."""

SUBSET_STREAMS: tuple[Stream, ...] = ("citation", "retrieval")
"""Streams that observe only some records (those that cite; those with a measured
context relevance): their traffic, baselines and detectors count those alone."""


_Key = TypeVar("_Key", bound=str)


def cause_words(causes: Mapping[_Key, float]) -> str:
    """A rate's split by cause as people read it (pages, the report, the CLI):
    ``retrieval 11.0 pts, generation 3.0 pts``, largest first; empty without causes."""
    ranked = sorted(causes.items(), key=lambda item: (-item[1], item[0]))
    return ", ".join(f"{cause} {share * 100:.1f} pts" for cause, share in ranked)


BAD_CITATIONS = ("wrong", "unresolved")
"""A claim's citation that an alert on the citation stream shows."""


@dataclass(frozen=True, slots=True)
class Evidence:
    """What an alert shows of an unsupported record: its chunk ids and the claims not supported."""

    chunk_ids: tuple[str, ...]
    claims: tuple[Claim, ...]

    def cited(self, claim: Claim) -> str | None:
        """The id of the chunk ``claim`` cites, if it cites one of these."""
        at = claim.chunk
        return self.chunk_ids[at] if at is not None and 0 <= at < len(self.chunk_ids) else None

    def marked(self, claim: Claim) -> tuple[str, ...]:
        """The ids of the chunks the claim's citation markers name, of these."""
        return tuple(self.chunk_ids[i] for i in claim.citations if 0 <= i < len(self.chunk_ids))


@dataclass(frozen=True, slots=True)
class Outcome:
    """One scored record, reduced to what drift detection needs."""

    trace_id: str
    at: datetime
    labels: Mapping[str, str]
    unsupported: bool
    unsupported_claims: tuple[str, ...] = ()
    critical: bool = False
    """An unsupported claim is critical (a severity rule marks it: an amount, date...)."""
    weight: float = 1.0
    """Production records this one stands for: the inverse of its sampling rate."""
    sample_reason: str = "sampled"
    """Why the sampler kept the record; its weight depends on it."""
    evidence: Evidence | None = None
    """For an unsupported record: what an alert shows of it."""
    seq: int = field(default=0, compare=False)
    """Its evaluation's id, which names it among the stored ones; not part of what it says,
    so outcomes of two stores compare alike."""
    cited: bool = False
    """The answer cites: the record is an observation of the citation stream (one that
    cites nothing is none, whatever its other streams say)."""
    miscited: bool = False
    """The answer cites and its citation accuracy is below 1 (a wrong or unresolved one)."""
    miscited_claims: tuple[str, ...] = ()
    context_relevance: float | None = None
    """None when the judge did not measure it: no observation of the retrieval stream."""
    cause: Cause | None = None
    """For an unsupported record: whether retrieval missed or generation strayed."""

    def observes(self, stream: Stream) -> bool:
        """Whether the record is an observation of ``stream``."""
        if stream == "citation":
            return self.cited
        if stream == "retrieval":
            return self.context_relevance is not None
        return True

    def is_bad(self, stream: Stream) -> bool:
        if stream == "unsupported":
            return self.unsupported
        if stream == "retrieval":
            return retrieval_missed(self.context_relevance)
        return self.critical if stream == "critical" else self.miscited


MIN_RATE = 0.01


"""The least rate a baseline stands for: after a spotless one, one bad answer is no alarm."""


@dataclass(frozen=True, slots=True)
class Baseline:
    """One segment's records and bad counts over a judge's frozen baseline window."""

    records: int
    unsupported: int
    critical: int = 0
    spread: float = 0.0
    """How much the unsupported rate moved within the window beyond binomial noise (SD)."""
    critical_spread: float = 0.0
    cited: int = 0
    """Records whose answer cites, the citation stream's observations; 0 when too few to
    stand for a rate (the segment has no citation baseline of its own)."""
    miscited: int = 0
    citation_spread: float = 0.0
    measured: int = 0
    """Records whose context relevance was measured, the retrieval stream's observations;
    0 when too few to stand for a rate (as ``cited``)."""
    missed: int = 0
    """Of those, retrieval misses (sampling-weighted, scaled to ``measured``)."""
    retrieval_spread: float = 0.0

    def records_of(self, stream: Stream) -> int:
        """The observations of ``stream`` the baseline holds."""
        if stream == "citation":
            return self.cited
        return self.measured if stream == "retrieval" else self.records

    def _count(self, stream: Stream) -> int:
        counts = {
            "unsupported": self.unsupported,
            "critical": self.critical,
            "citation": self.miscited,
            "retrieval": self.missed,
        }
        return counts[stream]

    def rate_of(self, stream: Stream) -> float:
        """The Jeffreys estimate (count + 0.5) / (records + 1), at least ``MIN_RATE``."""
        return max(MIN_RATE, (self._count(stream) + 0.5) / (self.records_of(stream) + 1))

    def in_control_spread(self, stream: Stream, wobble: float, shift: float) -> float:
        """SD of the rate a detector sees while nothing is wrong: the baseline's own
        estimation error, and its wobble (measured, but at least ``wobble`` × rate).

        At most a quarter of the design shift: past that a small baseline is too
        uncertain for any threshold to be both quiet and useful, and the budget is
        not kept (`faithmon drift calibrate` can refine it once history accrues).
        """
        q0 = self.rate_of(stream)
        moved = {
            "unsupported": self.spread,
            "critical": self.critical_spread,
            "citation": self.citation_spread,
            "retrieval": self.retrieval_spread,
        }[stream]
        n = self.records_of(stream)
        spread = math.sqrt(max(moved, wobble * q0) ** 2 + q0 * (1 - q0) / (n + 1))
        return min(spread, shift / 4)

    @property
    def rate(self) -> float:
        return self.rate_of("unsupported")


def baseline_for(
    stream: Stream, baselines: Mapping[str, Baseline], key: str, root: str
) -> tuple[Baseline, Literal["own", "overall"]] | None:
    """The baseline segment ``key`` (of the partition whose overall is ``root``) is measured
    against on ``stream``, and whose it is; None: the stream is off for it.

    Its own, else its partition's overall's. On a stream of ``SUBSET_STREAMS`` a baseline
    counts only with observations of it in it: a partition that never cited (or whose
    judge never measured relevance) in its window has the stream off, and a segment that
    never cites is never observed on it.
    """
    own = baselines.get(key)
    if stream not in SUBSET_STREAMS:
        return (own, "own") if own is not None else (baselines[root], "overall")
    if own is not None and own.records_of(stream):
        return own, "own"
    overall = baselines[root]
    return (overall, "overall") if overall.records_of(stream) else None


Window = tuple[datetime, datetime]


@dataclass(frozen=True, slots=True)
class FrozenBaselines:
    """A judge configuration's baselines, each frozen once over a window of trace time."""

    start: datetime
    end: datetime
    """The first window frozen (the earliest): every segment's unless ``windows`` says."""
    segments: Mapping[str, Baseline]
    """Segment key → its baseline; every partition frozen has its overall here (``""``,
    or a tenant's ``tenant=T``)."""
    windows: Mapping[str, Window] = field(default_factory=dict)
    """Segment key → its window, for the segments frozen over another one (a tenant seen
    first after the first window froze over a window of its own records)."""

    def window_of(self, key: str) -> Window:
        return self.windows.get(key, (self.start, self.end))

    @classmethod
    def of(cls, segments: Mapping[str, Baseline], windows: Mapping[str, Window]) -> FrozenBaselines:
        """Baselines (at least one) with each one's window, in the one form whatever order
        they were frozen or read in: the earliest window is (start, end), the others stay
        in ``windows``."""
        first = min(windows[key] for key in segments)
        others = {key: windows[key] for key in segments if windows[key] != first}
        return cls(first[0], first[1], dict(segments), others)


@dataclass(frozen=True, slots=True)
class Signal:
    """A detector's reading for one segment, which alerts turn into state."""

    rule: str
    segment: Mapping[str, str]
    level: Literal["ok", "pending", "firing"]
    details: Mapping[str, Any] = field(default_factory=dict)
    severity: str = ""
    """Empty: ``warning`` when pending, ``critical`` when firing."""
