"""The sentinel job: rerun known cases through each judge configuration, flag judge drift."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime

from ..alerts import deliver, reconcile, to_tell
from ..drift import sentinels
from ..model import AlertSink, Judge, Judgement, Signal
from ..model.standing import NEVER_TRUSTED
from ..store import Sessions, work
from ..store import alerts as store_alerts
from ..store import sentinels as store_sentinels
from ._shared import STOPPING
from .score import block_reason, blocked_alert, judge_safely

logger = logging.getLogger(__name__)


JUDGE_DRIFT_RULE = "judge_drift"


@dataclass(frozen=True, slots=True)
class SentinelRun:
    name: str
    version: str
    result: sentinels.RunResult
    drift: sentinels.JudgeDrift


def _judge_cases(
    judge: Judge, cases: Sequence[sentinels.Case], concurrency: int
) -> list[Judgement] | Judgement | None:
    """Every case judged, ``concurrency`` at a time. None when the worker is stopping,
    the refusal when the endpoint refuses the judge (a partial run would read as a
    judge that got worse, and more calls would only be refused again)."""
    refused = threading.Event()
    refusal: list[Judgement] = []

    def one(case: sentinels.Case) -> Judgement | None:
        if refused.is_set() or STOPPING.is_set():
            return None
        judgement = judge_safely(judge, case.question, case.chunks, case.answer)
        if judgement.blocks_judge:
            refusal.append(judgement)
            refused.set()
        return judgement

    with ThreadPoolExecutor(max_workers=max(1, concurrency)) as pool:
        results = list(pool.map(one, cases))
    if refusal:
        return refusal[0]
    if STOPPING.is_set() or any(r is None for r in results):
        return None
    return [r for r in results if r is not None]


def run_sentinels(
    sessions: Sessions,
    judge: Judge,
    config: sentinels.JudgeDriftConfig | None = None,
    sinks: Sequence[AlertSink] = (),
    name: str | None = None,
    now: Callable[[], datetime] = lambda: datetime.now(UTC),
    concurrency: int = 4,
) -> list[SentinelRun]:
    """Run every sentinel set (or ``name``) through ``judge`` and check the judge for drift.

    When it drifts, its evaluations since its last good run stop counting for
    production drift, production alerts are held back, and a judge_drift alert says
    which way it moved; a good run later trusts it again and resolves the alert.
    """
    config = config or sentinels.JudgeDriftConfig()
    with sessions() as session, session.begin():
        if not store_sentinels.has_sets(session):
            starter = sentinels.starter_cases()
            store_sentinels.add_set(session, sentinels.STARTER, sentinels.version(starter), starter)
            logger.info("faithmon: loaded the starter sentinel set (%d cases)", len(starter))
        sets = store_sentinels.latest_sets(session, name)
    done = []
    for set_id, set_name, version, cases in sets:
        with sessions() as session:
            if work.judge_block(session, judge.name):
                logger.info("faithmon: judge %s is blocked: sentinels wait", judge.name)
                break
        judgements = _judge_cases(judge, cases, concurrency)
        if isinstance(judgements, Judgement):
            blocked = []
            with sessions() as session, session.begin():
                if work.block_judge(session, judge.name, block_reason(judgements)):
                    alert = blocked_alert(judge.name, judgements, now())
                    blocked = store_alerts.save_alerts(session, [alert])
            deliver(sinks, blocked)
            break
        if judgements is None:
            logger.info("faithmon: stopping: sentinel run of %s abandoned", set_name)
            break
        result = sentinels.score_run(cases, judgements)
        when = now()
        with sessions() as session, session.begin():
            history = store_sentinels.runs(session, set_id, judge.name)
            reference = store_sentinels.reference_run(session, set_id, judge.name)
            series = [r for _, r, _ in history]
            if reference is not None and (not history or history[0][2] == "drift"):
                # A new judge configuration is measured against the trusted one it
                # replaces, so a configuration that is broken from its first run is caught.
                series.insert(0, reference[1])
            state = sentinels.judge_drift([*series, result], config)
            label = "drift" if state.drifting else "good"
            store_sentinels.add_run(
                session, set_id, judge.name, result, state.statistic, label, when
            )
            good = [at for at, _, s in history if s == "good"]
            segment = {"judge": judge.name, "sentinel": set_name}
            details = {
                "version": version,
                "direction": state.direction,
                "statistic": state.statistic,
                "tripwire": state.tripwire,
                **result.as_json(),
            }
            if reference is not None and series and series[0] is reference[1]:
                details["reference_judge"] = reference[0]
                details["reference_accuracy"] = round(reference[1].accuracy, 4)
                details["reference_false_flag_rate"] = round(reference[1].false_flag_rate, 4)
                details["reference_miss_rate"] = round(reference[1].miss_rate, 4)
            if state.drifting:
                store_sentinels.distrust(
                    session,
                    judge.name,
                    # Never good: nothing this configuration judged can be trusted.
                    good[-1] if good else NEVER_TRUSTED,
                    f"sentinel {set_name}: judge {state.direction}",
                )
            else:
                store_sentinels.trust_again(session, judge.name, when)
            signal = Signal(
                JUDGE_DRIFT_RULE, segment, "firing" if state.drifting else "ok", details
            )
            changed = store_alerts.save_alerts(
                session,
                reconcile(
                    # Locked: written back whole, an acknowledgement made meanwhile stays.
                    store_alerts.open_alerts(session, JUDGE_DRIFT_RULE, lock=True),
                    [signal],
                    when,
                ),
            )
        deliver(sinks, to_tell(changed))
        done.append(SentinelRun(set_name, version, result, state))
    return done
