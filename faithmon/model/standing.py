"""A judge configuration's standing: may its production scores be interpreted?

A configuration must prove itself first: its latest run on every sentinel set has to
clear a floor (accuracy at least ``min_accuracy``, false-flag and miss rates each at
most ``max_error_rate``). Below it the configuration is *unproven*: its evaluations
are stored but not trusted, and production drift on them is held back. One that was
proven and then lost its sentinels' trust (the judge-drift trust window) is
*drifting*; one the endpoint refuses (401, 403, no quota) is *blocked*; one with no
sentinel run yet is *untested*, and its scores count as they always did.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal

from .judgement import SentinelResult

State = Literal["proven", "unproven", "drifting", "blocked", "untested"]

NEVER_TRUSTED = datetime(1970, 1, 1, tzinfo=UTC)
"""Where the trust window of a configuration that no sentinel run ever found good opens:
nothing it judged is trusted. People read "never trusted", not this date."""


def untrusted_since(since: datetime) -> str:
    """When a trust window opened, as people read it."""
    return "never trusted" if since <= NEVER_TRUSTED else f"since {since:%Y-%m-%d %H:%M} UTC"


@dataclass(frozen=True, slots=True)
class ProofFloor:
    """FAITHMON_SENTINEL_MIN_ACCURACY and FAITHMON_SENTINEL_MAX_ERROR_RATE."""

    min_accuracy: float = 0.85
    max_error_rate: float = 0.2
    """Applied to the false-flag rate and to the miss rate, each on its own."""

    def shortfall(self, result: SentinelResult) -> str | None:
        """What keeps ``result`` below the floor (``accuracy 0.60``); None: it clears it."""
        if not result.judged:
            return "no case judged"
        short = []
        if result.accuracy < self.min_accuracy:
            short.append(f"accuracy {result.accuracy:.2f}")
        if result.false_flag_rate > self.max_error_rate:
            short.append(f"false-flag rate {result.false_flag_rate:.2f}")
        if result.miss_rate > self.max_error_rate:
            short.append(f"miss rate {result.miss_rate:.2f}")
        return ", ".join(short) or None


@dataclass(frozen=True, slots=True)
class SetRun:
    """A configuration's latest run on one sentinel set."""

    set_name: str
    version: str
    ran_at: datetime
    result: SentinelResult


@dataclass(frozen=True, slots=True)
class JudgeStanding:
    judge: str
    runs: tuple[SetRun, ...] = ()
    """The latest run on each sentinel set, oldest first; empty: untested."""
    shortfall: str | None = None
    """Why the run in ``deciding`` is below the floor; None: every latest run clears it."""
    deciding: SetRun | None = None
    """The run the standing rests on: the first below the floor, else the newest."""
    ever_proven: bool = False
    distrust: tuple[datetime, datetime | None, str] | None = None
    """The judge-drift trust window (since, until, reason); until None: still open."""
    blocked: str | None = None
    """Why the endpoint refuses the configuration, until `faithmon judge unblock`."""

    @property
    def proven(self) -> bool | None:
        """None when there is no run to tell."""
        return None if not self.runs else self.shortfall is None

    @property
    def distrusted(self) -> bool:
        return self.distrust is not None and self.distrust[1] is None

    @property
    def state(self) -> State:
        if self.blocked is not None:
            return "blocked"
        if not self.runs:
            return "untested"
        if self.distrusted and self.ever_proven:
            return "drifting"
        if self.proven is False:
            return "unproven"
        return "drifting" if self.distrusted else "proven"

    @property
    def held_back(self) -> bool:
        """Production drift on its scores raises no alert (a block changes nothing here)."""
        return self.distrusted or self.proven is False

    def trusts(self, created_at: datetime) -> bool:
        """Whether an evaluation it made at ``created_at`` is to be believed."""
        if self.proven is False:
            return False
        if self.distrust is None:
            return True
        since, until, _ = self.distrust
        return not (created_at >= since and (until is None or created_at < until))

    @property
    def line(self) -> str:
        """The standing in one plain line, as the CLI, the report and the demo print it."""
        state, run = self.state, self.deciding
        sentinels = f"the {run.set_name} sentinels" if run is not None else "its sentinels"
        if state == "blocked":
            return f"{self.judge} is blocked: {self.blocked}; it scores nothing until unblocked"
        if state == "untested":
            return (
                f"{self.judge} is untested: no sentinel run yet; its production scores are "
                "interpreted as before"
            )
        if state == "drifting":
            reason = self.distrust[2] if self.distrust is not None else "sentinels"
            return (
                f"{self.judge} is drifting: {reason}; its scores are held back from drift "
                "until a good sentinel run"
            )
        if state == "unproven":
            return (
                f"{self.judge} is unproven: it cannot separate {sentinels}, {self.shortfall}; "
                "production scores are not interpreted"
            )
        assert run is not None
        r = run.result
        return (
            f"{self.judge} is proven: it separates {sentinels}, accuracy {r.accuracy:.2f}, "
            f"false-flag rate {r.false_flag_rate:.2f}, miss rate {r.miss_rate:.2f}"
        )

    def as_json(self) -> dict[str, Any]:
        """The state and the figures of the deciding run (null when untested)."""
        run = self.deciding

        def figures(item: SetRun | None) -> dict[str, Any]:
            r = item.result if item is not None else None
            return {
                "set": item.set_name if item is not None else None,
                "version": item.version if item is not None else None,
                "ran_at": item.ran_at.isoformat() if item is not None else None,
                "accuracy": round(r.accuracy, 4) if r is not None else None,
                "false_flag_rate": round(r.false_flag_rate, 4) if r is not None else None,
                "miss_rate": round(r.miss_rate, 4) if r is not None else None,
                "score_gap": r.score_gap if r is not None else None,
            }

        return {
            "judge": self.judge,
            "state": self.state,
            "line": self.line,
            **figures(run),
            "sets": [figures(item) for item in self.runs],
        }


def judge_standing(
    judge: str,
    runs: Sequence[SetRun],
    floor: ProofFloor,
    ever_proven: bool = False,
    distrust: tuple[datetime, datetime | None, str] | None = None,
    blocked: str | None = None,
) -> JudgeStanding:
    """The standing of ``judge`` from its latest run on each set (the rule, no I/O)."""
    runs = tuple(sorted(runs, key=lambda r: r.ran_at))
    failing = [(run, floor.shortfall(run.result)) for run in runs]
    below = [(run, why) for run, why in failing if why is not None]
    deciding, shortfall = below[0] if below else (runs[-1] if runs else None, None)
    return JudgeStanding(
        judge,
        runs,
        shortfall,
        deciding,
        ever_proven or (bool(runs) and not below),
        distrust,
        blocked,
    )
