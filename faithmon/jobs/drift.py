"""The drift job: per-segment detectors against frozen baselines, and the alerts they raise.

With ``tenant`` among the dimensions each tenant is a partition of its own (see
:mod:`faithmon.drift.detect`): its baseline freezes on its own records, and every
reading, alert and example it raises names that tenant and holds only its records.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any

from .. import drift
from ..alerts import Policy as AlertPolicy
from ..alerts import deliver, to_tell
from ..drift.ceiling import Ceiling, ceiling_signals, progress
from ..drift.state import DriftState
from ..model import Alert, AlertSink, Signal
from ..model.standing import ProofFloor
from ..store import Sessions, outcome_stream
from ..store import baselines as store_baselines
from ..store import drift_runs as store_drift_runs
from ..store import sentinels as store_sentinels
from ..store import thresholds as store_thresholds
from . import drift_fold
from ._shared import reconcile_kinds

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class DriftRun:
    baseline_ready: bool
    readings: tuple[drift.Reading, ...]
    changed: tuple[Alert, ...]
    silent: tuple[drift.Silence, ...] = ()
    held_back: bool = False
    """The judge is not trusted (sentinels: unproven or drifting): its alerts wait."""
    building: tuple[Mapping[str, str], ...] = ()
    """The overall of each partition with records whose baseline is not frozen yet."""
    progress: tuple[Mapping[str, Any], ...] = ()
    """Per partition of ``building``: how far its baseline has come (records and days of
    the ones needed) and the ceiling that watches it until then (``drift.ceiling``)."""
    thresholds_from: Mapping[str, object] | None = None
    """For a dry run whose own threshold settings differ from those of the run that keeps
    the state (the worker's, which raises the alerts): the settings it read with instead."""


DRIFT_RULES = (*drift.RULES.values(), drift.NO_DATA_RULE, drift.CEILING_RULE)


STREAM_OF_RULE: dict[str, drift.Stream] = {rule: stream for stream, rule in drift.RULES.items()}


def _in_context(
    signals: Sequence[Signal], judge_name: str, sentinel: Mapping[str, Any]
) -> list[Signal]:
    """Each signal with the judge that scored its records and that judge's sentinel status;
    the examples' evidence is in the signal already (read with the outcomes)."""
    return [
        replace(s, details={**s.details, "judge": judge_name, "sentinel_status": sentinel})
        for s in signals
    ]


def check_drift(
    sessions: Sessions,
    judge_name: str,
    config: drift.DriftConfig,
    sinks: Sequence[AlertSink] = (),
    now: Callable[[], datetime] = lambda: datetime.now(UTC),
    dry_run: bool = False,
    policy: AlertPolicy | None = None,
    floor: ProofFloor | None = None,
    rebuild: bool = False,
    ceiling: Ceiling | None = None,
) -> DriftRun:
    """Update every detector and the alerts; sinks hear of the changes the policy says to tell.

    A judge below the sentinels' ``floor`` (unproven) or drifting is held back: the run
    is computed and stored, and raises no alert. One with no sentinel run yet is not.
    With ``dry_run`` the readings are computed and nothing is written (the baseline
    is not frozen, no alert changes, the fold is not kept) but the thresholds it solved,
    into a state already kept: what `faithmon drift status` shows. Each run reads only
    the outcomes after the kept state's horizon (see :mod:`.drift_fold`); ``rebuild``
    folds every stored outcome again. While a partition's baseline is building, its
    segments are held to the ``ceiling`` instead (``faithfulness_ceiling``).
    """
    policy = policy or AlertPolicy()
    ceiling = ceiling or Ceiling()
    clock = now()
    with sessions() as session, session.begin():
        standing = store_sentinels.standing(session, judge_name, floor or ProofFloor())
        held_back = standing.held_back
        stored = store_baselines.load_baselines(session, judge_name)
        folded = drift_fold.advance(session, judge_name, config, stored, rebuild, clock)
        frozen = stored
        waiting = drift_fold.building(session, judge_name, config, stored, folded.state)
        if waiting is not None:
            frozen = drift.freeze(drift_fold.weighed(session, waiting), config, stored)
        if frozen is not None and frozen is not stored:
            if not dry_run:
                # Rows already frozen keep what they have: only new partitions are added.
                store_baselines.save_baselines(session, judge_name, frozen)
                _log_frozen(judge_name, frozen, stored, folded.state)
            # The new baselines change what every detector folds: fold again from the start.
            folded = drift_fold.advance(session, judge_name, config, frozen, True, clock)
        state = folded.state
        roots = [r for r in sorted(state.roots()) if frozen is None or r not in frozen.segments]
        building = tuple(state.segments[root].segment for root in roots)
        grown = tuple(
            {
                "labels": dict(state.segments[root].segment),
                **progress(
                    state.segments[root].seen,
                    state.segments[root].first_at,
                    clock,
                    config,
                    ceiling,
                    first=frozen is None,
                ),
            }
            for root in roots
        )
        # The last window's outcomes, only while some baseline is building.
        recent = (
            list(outcome_stream.stream(session, judge_name, since=clock - ceiling.window))
            if roots
            else []
        )

        def capped(open_alerts: Sequence[Alert]) -> list[Signal]:
            return ceiling_signals(recent, set(roots), open_alerts, config, ceiling)

        if frozen is None:
            changed: list[Alert] = []
            if not dry_run:
                drift_fold.save(session, judge_name, folded, clock, config)
                store_drift_runs.save(
                    session,
                    judge_name,
                    clock,
                    False,
                    held_back,
                    drift.summarize((), (), grown),
                )
                if not held_back:
                    status = store_sentinels.status(session, judge_name)
                    changed = reconcile_kinds(
                        session,
                        [drift.CEILING_RULE],
                        lambda _: True,
                        lambda open_alerts: _in_context(capped(open_alerts), judge_name, status),
                        clock,
                        policy,
                    )
            # Told once the transaction is in, as the drift alerts below are.
            result = DriftRun(
                False,
                (),
                tuple(changed),
                held_back=held_back,
                building=building,
                progress=grown,
            )
        else:
            thresholds_from = None
            if dry_run:
                # A status agrees with the alerts: it reads with the thresholds of the run that
                # raised them, whatever this process's own settings say.
                kept = drift_fold.alerting_thresholds(session, judge_name)
                if kept is not None and any(getattr(config, k) != v for k, v in kept.items()):
                    config = replace(config, **kept)
                    thresholds_from = kept
            if not config.calibrated and config.threshold is None:
                config = replace(config, calibrated=store_thresholds.load(session))
            readings = drift.read(state, frozen, config)
            no_data, silent = drift.silences_of(state, config, clock)
            if not dry_run:
                drift_fold.save(session, judge_name, folded, clock, config)
                # What the read API serves until the next run: it does not run the detectors.
                summary = drift.summarize(readings, silent, grown)
                store_drift_runs.save(session, judge_name, clock, True, held_back, summary)
            else:
                # Only the thresholds solved for this reading: solving them is what a status costs.
                drift_fold.remember_solved(session, judge_name)
            if dry_run or held_back:
                if held_back and not dry_run:
                    # The judge is unproven or drifting: production alerts wait for its proof.
                    logger.warning("faithmon: %s; drift alerts held back", standing.line)
                return DriftRun(
                    True,
                    tuple(readings),
                    (),
                    tuple(silent),
                    held_back=held_back,
                    building=building,
                    thresholds_from=thresholds_from,
                    progress=grown,
                )
            sentinel = store_sentinels.status(session, judge_name)
            signals = [r.signal() for r in readings] + no_data
            changed = reconcile_kinds(
                session,
                DRIFT_RULES,
                lambda _: True,
                lambda open_alerts: _in_context(
                    signals + capped(open_alerts), judge_name, sentinel
                ),
                clock,
                policy,
            )
            result = DriftRun(
                True,
                tuple(readings),
                tuple(changed),
                tuple(silent),
                building=building,
                progress=grown,
            )
    deliver(sinks, to_tell(result.changed))
    return result


def _log_frozen(
    judge_name: str,
    frozen: drift.FrozenBaselines,
    stored: drift.FrozenBaselines | None,
    state: DriftState,
) -> None:
    # Counts only: a tenant's name comes from its records' labels.
    new = [key for key in frozen.segments if stored is None or key not in stored.segments]
    logger.info(
        "faithmon: drift baseline for %s frozen over %d records, %d segments",
        judge_name,
        sum(frozen.segments[key].records for key in new if key in state.members),
        len(new),
    )


def rebuild_drift(
    sessions: Sessions,
    judge_name: str,
    config: drift.DriftConfig,
    now: Callable[[], datetime] = lambda: datetime.now(UTC),
) -> drift_fold.Folded:
    """Fold every stored outcome of ``judge_name`` again and keep that state; alerts are
    left to the next run. What the incremental runs agree with, by construction."""
    with sessions() as session, session.begin():
        frozen = store_baselines.load_baselines(session, judge_name)
        clock = now()
        folded = drift_fold.advance(session, judge_name, config, frozen, True, clock)
        drift_fold.save(session, judge_name, folded, clock, config)
    return folded
