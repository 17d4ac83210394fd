"""What drift detection works on: outcomes, baselines and their frozen windows, signals."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

from .judgement import Claim

Stream = Literal["unsupported", "critical", "citation"]


"""What drift watches per segment: records with an unsupported claim, or a critical one;
and, of the records whose answer cites, those with a wrong or unresolved citation."""

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

    def observes(self, stream: Stream) -> bool:
        """Whether the record is an observation of ``stream``."""
        return self.cited or stream != "citation"

    def is_bad(self, stream: Stream) -> bool:
        if stream == "unsupported":
            return self.unsupported
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

    def records_of(self, stream: Stream) -> int:
        """The observations of ``stream`` the baseline holds."""
        return self.cited if stream == "citation" else self.records

    def rate_of(self, stream: Stream) -> float:
        """The Jeffreys estimate (count + 0.5) / (records + 1), at least ``MIN_RATE``."""
        if stream == "unsupported":
            count = self.unsupported
        else:
            count = self.critical if stream == "critical" else self.miscited
        return max(MIN_RATE, (count + 0.5) / (self.records_of(stream) + 1))

    def in_control_spread(self, stream: Stream, wobble: float, shift: float) -> float:
        """SD of the rate a detector sees while nothing is wrong: the baseline's own
        estimation error, and its wobble (measured, but at least ``wobble`` × rate).

        At most a quarter of the design shift: past that a small baseline is too
        uncertain for any threshold to be both quiet and useful, and the budget is
        not kept (`faithmon drift calibrate` can refine it once history accrues).
        """
        q0 = self.rate_of(stream)
        if stream == "unsupported":
            moved = self.spread
        else:
            moved = self.critical_spread if stream == "critical" else self.citation_spread
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

    Its own, else its partition's overall's. On the citation stream a baseline counts
    only with citing records in it: a partition that never cited in its window has the
    stream off, and a segment that never cites is never observed on it.
    """
    own = baselines.get(key)
    if stream != "citation":
        return (own, "own") if own is not None else (baselines[root], "overall")
    if own is not None and own.cited:
        return own, "own"
    overall = baselines[root]
    return (overall, "overall") if overall.cited else None


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
