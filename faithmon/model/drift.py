"""What drift detection works on: outcomes, baselines and their frozen windows, signals."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

from .judgement import Claim

Stream = Literal["unsupported", "critical"]


"""What drift watches per segment: records with an unsupported claim, or a critical one."""


@dataclass(frozen=True, slots=True)
class Evidence:
    """What an alert shows of an unsupported record: its chunk ids and the claims not supported."""

    chunk_ids: tuple[str, ...]
    claims: tuple[Claim, ...]

    def cited(self, claim: Claim) -> str | None:
        """The id of the chunk ``claim`` cites, if it cites one of these."""
        at = claim.chunk
        return self.chunk_ids[at] if at is not None and 0 <= at < len(self.chunk_ids) else None


@dataclass(frozen=True, slots=True)
class Outcome:
    """One scored record, reduced to what drift detection needs."""

    trace_id: str
    at: datetime
    labels: Mapping[str, str]
    unsupported: bool
    unsupported_claims: tuple[str, ...] = ()
    critical: bool = False
    """An unsupported claim is critical (a number, amount, date or dosage)."""
    weight: float = 1.0
    """Production records this one stands for: the inverse of its sampling rate."""
    sample_reason: str = "sampled"
    """Why the sampler kept the record; its weight depends on it."""
    evidence: Evidence | None = None
    """For an unsupported record: what an alert shows of it."""
    seq: int = field(default=0, compare=False)
    """Its evaluation's id, which names it among the stored ones; not part of what it says,
    so outcomes of two stores compare alike."""


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

    def rate_of(self, stream: Stream) -> float:
        """The Jeffreys estimate (count + 0.5) / (records + 1), at least ``MIN_RATE``."""
        count = self.unsupported if stream == "unsupported" else self.critical
        return max(MIN_RATE, (count + 0.5) / (self.records + 1))

    def in_control_spread(self, stream: Stream, wobble: float, shift: float) -> float:
        """SD of the rate a detector sees while nothing is wrong: the baseline's own
        estimation error, and its wobble (measured, but at least ``wobble`` × rate).

        At most a quarter of the design shift: past that a small baseline is too
        uncertain for any threshold to be both quiet and useful, and the budget is
        not kept (`faithmon drift calibrate` can refine it once history accrues).
        """
        q0 = self.rate_of(stream)
        moved = self.spread if stream == "unsupported" else self.critical_spread
        spread = math.sqrt(max(moved, wobble * q0) ** 2 + q0 * (1 - q0) / (self.records + 1))
        return min(spread, shift / 4)

    @property
    def rate(self) -> float:
        return self.rate_of("unsupported")


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
