"""Signals about faithmon's own health: a judge whose evaluations fail too often
(``judge_error``, cause ``error_rate``) and a receiver that stopped saving
(``ingest_error``). They are failures of the monitor, raised as their own kinds and never
counted as low faithfulness; the lifecycle turns them into alerts like any signal.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from datetime import datetime, timedelta

from ..model import Alert, Signal
from ..model.health import ReceiverStatus

JUDGE_ERROR = "judge_error"
INGEST_ERROR = "ingest_error"
ERROR_RATE = "error_rate"


def judge_error_signal(
    judge: str,
    outcomes: Sequence[tuple[str, str | None]],
    bound: float,
    minimum: int,
) -> Signal:
    """Firing when more than ``bound`` of the judge's recent evaluations (``(status,
    error)``, at least ``minimum`` of them) are ``judge_error``; the commonest causes go
    with it (an error's text is the judge client's own words, never a record's)."""
    errors = [error or "unknown" for status, error in outcomes if status == JUDGE_ERROR]
    rate = len(errors) / len(outcomes) if outcomes else 0.0
    level = "firing" if len(outcomes) >= minimum and rate > bound else "ok"
    causes = Counter(e[:120] for e in errors).most_common(3)
    return Signal(
        JUDGE_ERROR,
        {"judge": judge, "cause": ERROR_RATE},
        level,  # type: ignore[arg-type]
        {
            "cause": ERROR_RATE,
            "error_rate": round(rate, 4),
            "errors": len(errors),
            "evaluations": len(outcomes),
            "bound": bound,
            "top_errors": [{"error": e, "count": n} for e, n in causes],
        },
        severity="critical",
    )


def receiver_signals(
    statuses: Iterable[ReceiverStatus],
    open_alerts: Iterable[Alert],
    now: datetime,
    stale: timedelta,
) -> list[Signal]:
    """One signal per receiver: firing when a running receiver has not beaten for
    ``stale`` (it died or hangs), or when its saves have failed for ``stale``; ok when it
    is healthy or stopped cleanly. Open alerts of receivers no longer listed get ok."""
    signals: list[Signal] = []
    seen: set[str] = set()
    for status in statuses:
        seen.add(status.name)
        details: dict[str, object] = {
            "receiver": status.name,
            "beat_at": status.beat_at.isoformat(),
            "records": status.records,
            "lost": status.lost,
            "backlog": status.backlog,
        }
        level = "ok"
        if status.stopped_at is not None:
            details["cause"] = "stopped"
        elif now - status.beat_at >= stale:
            level = "firing"
            details["cause"] = "silent"
            details["silent_seconds"] = int((now - status.beat_at).total_seconds())
        elif status.failing_since is not None and now - status.failing_since >= stale:
            level = "firing"
            details["cause"] = "saving_fails"
            details["failing_since"] = status.failing_since.isoformat()
            details["error"] = status.last_error
        signals.append(
            Signal(INGEST_ERROR, {"receiver": status.name}, level, details, "critical")  # type: ignore[arg-type]
        )
    for alert in open_alerts:
        name = alert.segment.get("receiver", "")
        if alert.rule == INGEST_ERROR and name not in seen:
            seen.add(name)
            signals.append(Signal(INGEST_ERROR, dict(alert.segment), "ok", {"cause": "forgotten"}))
    return signals
