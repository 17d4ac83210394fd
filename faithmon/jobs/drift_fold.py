"""The drift run's incremental half: load the kept state, fold what was scored since.

The kept state (:mod:`faithmon.drift.state`) covers every outcome up to its horizon, a
trace time before which no new outcome is expected (see ``outcome_stream.horizon``). A run
reads only the outcomes after it (by the start index): those now below the new horizon
join the kept state, the rest are folded onto a copy for this run's readings. So a run
costs what arrived since, not stored history. The state is rebuilt from every outcome
when it was folded against something else (settings, frozen baselines, the judge's
trust windows: its ``fingerprint``), when an outcome lands behind the horizon (a trace
stored late, a record rescored), when none is stored, or when asked
(`faithmon drift rebuild`).
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from typing import Any

from .. import drift
from ..drift.state import DriftState, Folder, Reset
from ..drift.state_json import FORMAT, dump, load
from ..model import FrozenBaselines, Outcome
from ..store import Session, outcome_stream
from ..store import alerts as store_alerts
from ..store import drift_state as store_drift_state
from ..store import evaluations as store_evaluations
from ..store import sampling as store_sampling

logger = logging.getLogger(__name__)


@dataclass(slots=True)
class Folded:
    kept: dict[str, Any]
    """The state up to the horizon, as stored."""
    state: DriftState
    """The kept state with the outcomes after the horizon folded on: what is read."""
    frozen: FrozenBaselines | None
    fingerprint: str
    rebuilt: bool
    read: int
    """Outcomes this run read."""


def fingerprint(
    config: drift.DriftConfig, frozen: FrozenBaselines | None, trust: Sequence[str | None]
) -> str:
    """What a state was folded against; thresholds are not in it (read at each run)."""
    settings = {
        "dimensions": config.dimensions,
        "shift": config.shift,
        "critical_shift": config.critical_shift,
        "citation_shift": config.citation_shift,
        "retrieval_shift": config.retrieval_shift,
        "recovery_records": config.recovery_records,
        "no_data_dimensions": config.no_data_dimensions,
    }
    baselines = None
    if frozen is not None:
        baselines = {
            key: [asdict(b), [t.isoformat() for t in frozen.window_of(key)]]
            for key, b in sorted(frozen.segments.items())
        }
    text = json.dumps([FORMAT, settings, baselines, list(trust)], sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def _resets(session: Session) -> list[Reset]:
    found = []
    for alert in store_alerts.resolutions(session, list(drift.RULES.values())):
        at = alert.details.get("reset_at")
        if at:
            stream = next(s for s, rule in drift.RULES.items() if rule == alert.rule)
            found.append(Reset(stream, dict(alert.segment), datetime.fromisoformat(at)))
    return found


def weighed(session: Session, outcomes: list[Outcome]) -> list[Outcome]:
    if not outcomes:
        return outcomes
    first = min(o.at for o in outcomes).replace(minute=0, second=0, microsecond=0)
    tallies = store_sampling.sampling_counts(session, reasons=drift.SAMPLING_REASONS, since=first)
    return drift.weigh(outcomes, tallies)


def _chunks(items: Iterable[Outcome], size: int = 5000) -> Iterator[list[Outcome]]:
    chunk: list[Outcome] = []
    for item in items:
        chunk.append(item)
        if len(chunk) >= size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def advance(
    session: Session,
    judge: str,
    config: drift.DriftConfig,
    frozen: FrozenBaselines | None,
    rebuild: bool = False,
    now: datetime | None = None,
) -> Folded:
    """The detectors' state over every counted outcome of ``judge``, from the kept one;
    ``now`` (the job's clock) places the horizon."""
    mark = fingerprint(config, frozen, outcome_stream.trust_windows(session, judge))
    stored = None if rebuild else store_drift_state.load(session, judge)
    state = None
    if stored is not None:
        drift.learn(stored.state.get("solved", {}))
    if stored is not None and stored.fingerprint == mark:
        state = load(stored.state, config.recovery_records)
    if (
        state is not None
        and state.horizon is not None
        and outcome_stream.late(session, judge, state.watermark, state.horizon)
    ):
        logger.info("faithmon: a score landed behind the drift horizon of %s; rebuilding", judge)
        state = None
    rebuilt = state is None
    if state is None:
        state = DriftState()
    folder = Folder(state, frozen, config)

    def history(after: datetime, until: datetime) -> list[Outcome]:
        found = list(outcome_stream.stream(session, judge, since=after, until=until))
        return weighed(session, found)

    for reset in _resets(session):
        folder.restart(reset, history)
    # Read before the outcomes, so an evaluation stored meanwhile counts as newer.
    newest = outcome_stream.newest_id(session)
    goal = outcome_stream.horizon(session, now or datetime.now(UTC))
    if state.horizon is not None and goal < state.horizon:
        goal = state.horizon
    tail: list[Outcome] = []
    read = 0
    for chunk in _chunks(outcome_stream.stream(session, judge, since=state.horizon)):
        for outcome in weighed(session, chunk):
            read += 1
            if outcome.at <= goal:
                folder.fold_one(outcome)
            else:
                tail.append(outcome)
    state.horizon = goal
    state.watermark = newest
    folder.prune()
    kept = dump(state)
    seen = load(kept, config.recovery_records)
    assert seen is not None
    seen.examples = dict(state.examples)
    after = Folder(seen, frozen, config)
    after.fold(tail)
    after.prune()
    # The outcomes folded here were streamed without evidence: every example an alert may
    # show is read again with it (a few per detector, by id).
    missing = [
        seq
        for live in seen.live.values()
        for _, _, seq, _ in live.examples
        if seq not in seen.examples or seen.examples[seq].evidence is None
    ]
    seen.examples.update(outcome_stream.by_seq(session, missing))
    return Folded(kept, seen, frozen, mark, rebuilt, read)


THRESHOLD_SETTINGS = ("threshold", "false_alarms", "wobble")
"""What sets the thresholds besides the stored calibration: kept with the state, so a
`drift status` run with other settings reads the thresholds the alerting run used."""


def save(
    session: Session, judge: str, folded: Folded, now: datetime, config: drift.DriftConfig
) -> None:
    thresholds = {name: getattr(config, name) for name in THRESHOLD_SETTINGS}
    data = {**folded.kept, "solved": drift.solved(), "thresholds": thresholds}
    stored = store_drift_state.StoredState(folded.fingerprint, int(data["watermark"]), data)
    store_drift_state.save(session, judge, stored, now)


def remember_solved(session: Session, judge: str, attempts: int = 3) -> bool:
    """Add what this process solved to ``judge``'s kept state, changing nothing else: a
    dry run (`faithmon drift status`) writes no more than that, and only to a state that is
    already kept. False when nothing was added.

    Written only over the state it read (:func:`store_drift_state.swap`): a run that kept
    a newer one meanwhile is read again, and never undone. After ``attempts`` such races
    it gives up: the thresholds are a cache, which a later run fills again."""
    solved = drift.solved()
    for _ in range(attempts):
        stored = store_drift_state.load(session, judge)
        if stored is None:
            return False
        known = stored.state.get("solved", {})
        if not set(solved) - set(known):
            return False
        data = {**stored.state, "solved": {**known, **solved}}
        if store_drift_state.swap(session, judge, stored, data, datetime.now(UTC)):
            return True
    logger.info(
        "faithmon: drift state of %s kept by another run meanwhile; solved not added", judge
    )
    return False


def alerting_thresholds(session: Session, judge: str) -> dict[str, Any] | None:
    """The threshold settings of the last run that kept ``judge``'s state (and so raised
    its alerts); None before any."""
    stored = store_drift_state.load(session, judge)
    if stored is None:
        return None
    kept = stored.state.get("thresholds")
    return dict(kept) if isinstance(kept, dict) else None


def building(
    session: Session,
    judge: str,
    config: drift.DriftConfig,
    frozen: FrozenBaselines | None,
    state: DriftState,
) -> list[Outcome] | None:
    """The outcomes the baselines still to freeze are taken from (trace order), or None
    when every partition seen is frozen. Before the first freeze that is every outcome;
    after it, only those of partitions without a baseline (a new tenant)."""
    if frozen is None:
        return store_evaluations.outcomes(session, judge, evidence=False)
    waiting = state.roots() - set(frozen.segments)
    if not waiting:
        return None
    tenants = [state.segments[root].segment.get(config.partition or "") for root in waiting]
    found = outcome_stream.stream(session, judge, tenants=tenants or None)
    return sorted(found, key=lambda o: (o.at, o.seq))
