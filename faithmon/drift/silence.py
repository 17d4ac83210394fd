"""Silent segments: a watched segment with no scored record for too long (``no_data``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from ..model import Outcome, Signal
from .config import NO_DATA_RULE, DriftConfig
from .state import DriftState, Folder


@dataclass(frozen=True, slots=True)
class Silence:
    """A segment that had traffic and has gone quiet."""

    segment: Mapping[str, str]
    last_at: datetime
    per_day: float


def silences(
    outcomes: Sequence[Outcome],
    config: DriftConfig,
    now: datetime,
    lookback_days: float = 7.0,
) -> tuple[list[Signal], list[Silence]]:
    """``no_data`` signals of ``outcomes`` (see :func:`silences_of`)."""
    state = DriftState()
    Folder(state, None, config).fold(outcomes)
    return silences_of(state, config, now, lookback_days)


def silences_of(
    state: DriftState,
    config: DriftConfig,
    now: datetime,
    lookback_days: float = 7.0,
) -> tuple[list[Signal], list[Silence]]:
    """``no_data`` signals: one per watched segment seen in the last ``lookback_days``.

    A segment is silent when it has had no scored record for ``no_data_hours``
    although its usual traffic would have brought at least five in that time
    (so a segment with a handful of records a day is not called silent). Each
    partition's overall is watched, and its segments of ``no_data_dimensions``.
    The lookback counts whole hours: the fold keeps hourly counts.
    """
    window = timedelta(hours=config.no_data_hours)
    start = (now - timedelta(days=lookback_days)).replace(minute=0, second=0, microsecond=0)
    signals: list[Signal] = []
    silent: list[Silence] = []
    for key, buckets in state.quiet.items():
        kept = [b for hour, b in buckets.items() if hour >= start]
        if not kept:
            continue
        segment = state.quiet_segments[key]
        count = sum(b[0] for b in kept)
        first = min(b[1] for b in kept)
        last = max(b[2] for b in kept)
        active_days = max((last - first).total_seconds() / 86400, 1 / 24)
        per_day = count / active_days
        expected = per_day * config.no_data_hours / 24
        quiet = now - last >= window and expected >= 5
        details = {
            "last_at": last.isoformat(),
            "silent_hours": round((now - last).total_seconds() / 3600, 1),
            "usual_per_day": round(per_day, 1),
            "no_data_hours": config.no_data_hours,
        }
        if quiet:
            silent.append(Silence(segment, last, per_day))
        signals.append(
            Signal(NO_DATA_RULE, segment, "firing" if quiet else "ok", details, "warning")
        )
    return signals, silent
