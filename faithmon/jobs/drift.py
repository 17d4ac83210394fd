"""The drift job: per-segment detectors against frozen baselines, and the alerts they raise."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime

from sqlalchemy.orm import Session

from .. import drift
from ..alerts import Policy as AlertPolicy
from ..alerts import deliver, reconcile, to_tell
from ..model import Alert, AlertSink, Outcome, Signal
from ..store import alerts as store_alerts
from ..store import baselines as store_baselines
from ..store import outcomes as store_outcomes
from ..store import repo
from ..store import sentinels as store_sentinels
from ..store import thresholds as store_thresholds
from ._shared import Sessions

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class DriftRun:
    baseline_ready: bool
    readings: tuple[drift.Reading, ...]
    changed: tuple[Alert, ...]
    silent: tuple[drift.Silence, ...] = ()
    held_back: bool = False
    """The judge is not trusted (sentinels): its alerts wait."""


DRIFT_RULES = (drift.RULE, drift.CRITICAL_RULE, drift.NO_DATA_RULE)


STREAM_OF_RULE: dict[str, drift.Stream] = {rule: stream for stream, rule in drift.RULES.items()}


def _baselines(
    session: Session,
    judge_name: str,
    outcomes: Sequence[Outcome],
    config: drift.DriftConfig,
    dry_run: bool,
) -> tuple[dict[str, drift.Baseline], datetime] | None:
    """The judge's frozen baselines and the end of their window; frozen now if the data allows."""
    stored = stored_baselines(session, judge_name)
    if stored is not None:
        return stored
    window = drift.baseline_window(outcomes, config)
    if window is None:
        return None
    baselines = drift.compute_baselines(outcomes, window[1], config)
    if not dry_run:
        store_baselines.save_baselines(
            session,
            judge_name,
            {
                k: (b.records, b.unsupported, b.critical, b.spread, b.critical_spread)
                for k, b in baselines.items()
            },
            window[0],
            window[1],
        )
        logger.info(
            "faithmon: drift baseline for %s frozen over %d records, %d segments",
            judge_name,
            baselines[""].records,
            len(baselines),
        )
    return baselines, window[1]


def stored_baselines(
    session: Session, judge_name: str
) -> tuple[dict[str, drift.Baseline], datetime] | None:
    stored = store_baselines.load_baselines(session, judge_name)
    if not stored:
        return None
    window_end = next(iter(stored.values()))[6]
    return {k: drift.Baseline(*row[:5]) for k, row in stored.items()}, window_end


def _restarts(
    session: Session, outcomes: Sequence[Outcome], config: drift.DriftConfig
) -> dict[str, datetime]:
    """Detector key → the trace time its CUSUM restarts from (see drift.restart_points)."""
    resets = []
    for alert in store_alerts.resolved_alerts(session, list(drift.RULES.values())):
        reset = alert.details.get("reset_at")
        if reset:
            stream = STREAM_OF_RULE[alert.rule]
            resets.append((stream, alert.segment, datetime.fromisoformat(reset)))
    return drift.restart_points(outcomes, resets, config.dimensions)


def _enrich(session: Session, judge_name: str, signals: Sequence[Signal]) -> list[Signal]:
    """Add what a team needs to act: chunk ids of the examples, sentinel status, judge."""
    sentinel = store_sentinels.status(session, judge_name)
    wanted = [
        e["trace_id"] for s in signals if s.level != "ok" for e in s.details.get("examples", ())
    ]
    found = repo.example_details(session, judge_name, wanted)
    enriched = []
    for item in signals:
        details = dict(item.details)
        details["judge"] = judge_name
        details["sentinel_status"] = sentinel
        if item.level != "ok" and details.get("examples"):
            details["examples"] = [
                {**e, **found.get(e["trace_id"], {})} for e in details["examples"]
            ]
        enriched.append(replace(item, details=details))
    return enriched


def check_drift(
    sessions: Sessions,
    judge_name: str,
    config: drift.DriftConfig,
    sinks: Sequence[AlertSink] = (),
    now: Callable[[], datetime] = lambda: datetime.now(UTC),
    dry_run: bool = False,
    policy: AlertPolicy | None = None,
) -> DriftRun:
    """Update every detector and the alerts; sinks hear of the changes the policy says to tell.

    With ``dry_run`` the readings are computed and nothing is written (the baseline
    is not frozen, no alert changes): what `faithmon drift status` shows.
    """
    policy = policy or AlertPolicy()
    clock = now()
    with sessions() as session, session.begin():
        trust = store_sentinels.trust_window(session, judge_name)
        held_back = trust is not None and trust[1] is None
        outcomes = store_outcomes.outcomes(session, judge_name)
        frozen = _baselines(session, judge_name, outcomes, config, dry_run)
        if frozen is None:
            return DriftRun(False, (), (), held_back=held_back)
        baselines, window_end = frozen
        if not config.calibrated and config.threshold is None:
            config = replace(config, calibrated=store_thresholds.load(session))
        readings = drift.detect(
            outcomes, baselines, window_end, config, since=_restarts(session, outcomes, config)
        )
        no_data, silent = drift.silences(outcomes, config, clock)
        if dry_run or held_back:
            if held_back and not dry_run:
                # The judge itself is drifting: production alerts wait for it to be trusted.
                logger.warning(
                    "faithmon: judge %s is not trusted; drift alerts held back", judge_name
                )
            return DriftRun(True, tuple(readings), (), tuple(silent), held_back=held_back)
        signals = _enrich(session, judge_name, [r.signal() for r in readings] + no_data)
        changed = store_alerts.save_alerts(
            session,
            reconcile(
                [a for a in store_alerts.open_alerts(session) if a.rule in DRIFT_RULES],
                signals,
                clock,
                policy,
                store_alerts.resolved_alerts(session, DRIFT_RULES, since=clock - policy.cooldown),
            ),
        )
    deliver(sinks, to_tell(changed))
    return DriftRun(True, tuple(readings), tuple(changed), tuple(silent))
