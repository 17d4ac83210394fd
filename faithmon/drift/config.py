"""What the drift detectors are set with: streams, rules, settings, detector keys."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from ..model import Stream, partition_label, segment_key
from ..model.records import TENANT as model_tenant

RULE = "faithfulness_drift"


CRITICAL_RULE = "critical_drift"


CITATION_RULE = "citation_drift"


RETRIEVAL_RULE = "retrieval_drift"


NO_DATA_RULE = "no_data"


CEILING_RULE = "faithfulness_ceiling"
"""While a partition's baseline builds: an unsupported rate over an absolute bar."""


RULES: dict[Stream, str] = {
    "unsupported": RULE,
    "critical": CRITICAL_RULE,
    "citation": CITATION_RULE,
    "retrieval": RETRIEVAL_RULE,
}


MAX_EXAMPLES = 3


DAYS_30 = 30.0


Level = Literal["ok", "pending", "firing"]


STREAMS: tuple[Stream, ...] = ("unsupported", "critical", "citation", "retrieval")


TENANT = model_tenant
"""The label drift partitions by, when it is one of the dimensions (``model.TENANT``)."""


@dataclass(frozen=True, slots=True)
class DriftConfig:
    dimensions: tuple[str, ...]
    threshold: float | None = None
    """A fixed CUSUM threshold for every detector; None derives each from the budget."""
    false_alarms: float = 1.0
    """Expected false alarms per 30 days across all active detectors of every partition."""
    wobble: float = 0.07
    """Least in-control wobble of a rate, relative to it, that thresholds allow for."""
    shift: float = 0.08
    critical_shift: float = 0.04
    citation_shift: float = 0.08
    retrieval_shift: float = 0.08
    baseline_records: int = 2000
    baseline_days: float = 7.0
    segment_min_baseline: int = 100
    max_delay_days: float = 7.0
    recovery_records: int = 200
    no_data_hours: float = 6.0
    no_data_dimensions: tuple[str, ...] = ("service", "route", "tenant")
    calibrated: Mapping[str, float] = field(default_factory=dict)
    """Thresholds set by `faithmon drift calibrate`, by :func:`detector_key`."""

    def shift_of(self, stream: Stream) -> float:
        shifts = {
            "unsupported": self.shift,
            "critical": self.critical_shift,
            "citation": self.citation_shift,
            "retrieval": self.retrieval_shift,
        }
        return shifts[stream]

    @property
    def partition(self) -> str | None:
        """The label whose values partition detection: ``tenant`` when it is a dimension.

        Each tenant's records are then a partition of their own, with ``{tenant: T}`` as
        its overall, so no segment, baseline or alert mixes tenants.
        """
        return partition_label(self.dimensions)

    def partition_of(self, labels: Mapping[str, str]) -> dict[str, str]:
        """The overall of the partition a record (or a segment) is in: ``{}`` untenanted."""
        label = self.partition
        value = labels.get(label) if label else None
        return {label: value} if label and value else {}


def detector_key(stream: Stream, segment: Mapping[str, str]) -> str:
    return f"{stream}|{segment_key(segment)}"
