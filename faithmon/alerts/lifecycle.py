"""Alert lifecycle (pending → firing → resolved), notification policy and delivery.

:func:`reconcile` turns detector signals into alert changes: one open alert per
(rule, segment).

- A signal at ``pending`` or ``firing`` opens the alert or moves it; an alert
  never goes back from firing to pending.
- A pending alert resolves when its signal is back at ``ok``. A firing one
  resolves only after ``recovery_runs`` runs in a row whose signal says the
  segment recovered (``details["recovered"]``, set by the drift detectors), or
  at once for rules without that notion (no data, judge drift), or when another
  segment explains it. Its resolution records ``reset_at``, where the detector
  restarts.
- Notification: sinks hear of an alert when it opens, starts firing or
  resolves, and again every ``renotify`` while it keeps firing. An alert that
  opens again within ``cooldown`` of resolving reuses the resolved alert and
  stays quiet until it fires: a flapping segment pages once. An alert held
  pending by its kind's ``for`` is quiet until it fires, and so is its
  resolution if it never did.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Any

from ..model import Alert, AlertSink, AlertState, Signal, segment_key, segment_name

logger = logging.getLogger(__name__)

SEVERITY = {"pending": "warning", "firing": "critical"}


@dataclass(frozen=True, slots=True)
class Policy:
    recovery_runs: int = 3
    cooldown: timedelta = timedelta(minutes=30)
    renotify: timedelta = timedelta(hours=4)
    hold_for: Mapping[str, timedelta] = field(default_factory=dict)
    """Per alert kind, how long a firing signal must last before its alert fires (the
    rules file's ``for``): until then it is pending, so a short blip never pages."""
    keep_firing_for: Mapping[str, timedelta] = field(default_factory=dict)
    """Per alert kind, how long a firing alert stays firing after its signal last fired."""


def _told(alert: Alert, now: datetime) -> Alert:
    return replace(alert, notified_at=now)


def reconcile(
    open_alerts: Iterable[Alert],
    signals: Sequence[Signal],
    now: datetime,
    policy: Policy | None = None,
    recently_resolved: Iterable[Alert] = (),
) -> list[Alert]:
    """The alerts that change because of ``signals``: new ones have ``id`` None.

    A returned alert whose ``notified_at`` is ``now`` is to be told to the sinks
    (:func:`to_tell`). ``recently_resolved`` are resolved alerts the cooldown may
    reopen.
    """
    policy = policy or Policy()
    current = {(a.rule, segment_key(a.segment)): a for a in open_alerts}
    resolved = {(a.rule, segment_key(a.segment)): a for a in recently_resolved}
    changed: list[Alert] = []
    for signal in signals:
        key = (signal.rule, segment_key(signal.segment))
        alert = current.get(key)
        details: dict[str, Any] = dict(signal.details)
        if alert is None:
            if signal.level != "ok":
                changed.append(_open(signal, details, now, policy, resolved.get(key)))
            continue
        if alert.state == "pending":
            changed.append(_from_pending(alert, signal, details, now, policy))
        else:
            changed.append(_from_firing(alert, signal, details, now, policy))
    return changed


def _severity(signal: Signal) -> str:
    return signal.severity or SEVERITY[signal.level]


def _open(
    signal: Signal,
    details: dict[str, Any],
    now: datetime,
    policy: Policy,
    last: Alert | None,
) -> Alert:
    state: AlertState = "firing" if signal.level == "firing" else "pending"
    held = state == "firing" and bool(policy.hold_for.get(signal.rule))
    if held:
        state = "pending"  # its signal must keep firing for the kind's `for`
    if state == "firing" and policy.keep_firing_for.get(signal.rule):
        details["firing_seen_at"] = now.isoformat()
    if (
        last is not None
        and last.resolved_at is not None
        and now - last.resolved_at < policy.cooldown
    ):
        details["reopened"] = int(last.details.get("reopened", 0)) + 1
        alert = replace(
            last,
            state=state,
            severity=_severity(signal),
            updated_at=now,
            resolved_at=None,
            details=details,
        )
        return _told(alert, now) if state == "firing" else alert
    alert = Alert(
        rule=signal.rule,
        segment=dict(signal.segment),
        state=state,
        severity=_severity(signal),
        opened_at=now,
        updated_at=now,
        details=details,
    )
    # A held alert says nothing until it fires: a blip shorter than `for` never pages.
    return alert if held else _told(alert, now)


# What people and the silence job wrote on an open alert, which a signal never says.
_CARRIED = ("acked_by", "acked_at", "reopened", "example_details", "muted_at", "muted_by_silence")


def _carry(alert: Alert, details: dict[str, Any]) -> None:
    for kept in _CARRIED:
        if kept in alert.details and kept not in details:
            details[kept] = alert.details[kept]


def _from_pending(
    alert: Alert, signal: Signal, details: dict[str, Any], now: datetime, policy: Policy
) -> Alert:
    _carry(alert, details)  # an ack of a pending alert outlives the next run
    hold = policy.hold_for.get(alert.rule)
    if signal.level == "firing" and hold and now - alert.opened_at < hold:
        return replace(alert, updated_at=now, details=details)
    if signal.level == "ok":
        done = replace(alert, state="resolved", updated_at=now, resolved_at=now, details=details)
        # The end of an alert nobody heard of (held by `for`) is not news either.
        return done if alert.notified_at is None else _told(done, now)
    if signal.level == "firing":
        if policy.keep_firing_for.get(alert.rule):
            details["firing_seen_at"] = now.isoformat()
        return _told(
            replace(
                alert, state="firing", severity=_severity(signal), updated_at=now, details=details
            ),
            now,
        )
    return replace(alert, updated_at=now, details=details)


def _from_firing(
    alert: Alert, signal: Signal, details: dict[str, Any], now: datetime, policy: Policy
) -> Alert:
    if "explained_by" in details or "folded_into" in details:
        done = True
    elif "recovered" in details:
        runs = int(alert.details.get("recovered_runs", 0)) + 1 if details["recovered"] else 0
        details["recovered_runs"] = runs
        done = runs >= policy.recovery_runs
    else:
        done = signal.level == "ok"
    _carry(alert, details)
    keep = policy.keep_firing_for.get(alert.rule)
    if keep and signal.level == "firing" and not done:
        details["firing_seen_at"] = now.isoformat()
    elif keep and "firing_seen_at" in alert.details:
        details["firing_seen_at"] = alert.details["firing_seen_at"]
    if done and keep and "explained_by" not in details and "folded_into" not in details:
        seen = datetime.fromisoformat(str(details.get("firing_seen_at") or alert.opened_at))
        done = now - seen >= keep
    if done:
        details["reset_at"] = details.get("last_at")
        return _told(
            replace(alert, state="resolved", updated_at=now, resolved_at=now, details=details),
            now,
        )
    updated = replace(alert, updated_at=now, details=details)
    due = alert.notified_at is None or now - alert.notified_at >= policy.renotify
    return _told(updated, now) if due else updated


def to_tell(alerts: Iterable[Alert]) -> list[Alert]:
    """The changes the sinks are to hear of (see :func:`reconcile`)."""
    return [a for a in alerts if a.notified_at is not None and a.notified_at == a.updated_at]


def describe(alert: Alert) -> str:
    segment = segment_name(alert.segment)
    d = alert.details
    text = f"{alert.rule} [{alert.state}] {segment}"
    if "ceiling" in d and "current_rate" in d:
        text += (
            f": unsupported rate {d['current_rate']:.1%} over {d.get('records')} records in the"
            f" last {d.get('window_hours', 1):g} h, above the ceiling of {d['ceiling']:.0%}"
            " (no drift baseline yet)"
        )
    elif "baseline_frozen" in d:
        text += ": the drift baseline is frozen; drift watches this segment now"
    elif "current_rate" in d:
        what, over = _STREAM_WORDS.get(str(d.get("stream")), _STREAM_WORDS["unsupported"])
        text += (
            f": {what} {d['current_rate']:.1%} over {d.get('records')} {over}"
            f" vs baseline {d['baseline_rate']:.1%}"
        )
        text += _causes(d)
    elif "with_findings" in d:
        rules = ", ".join(f"{r['rule']} {r['answers']}" for r in d.get("rules", []))
        text += (
            f": {d['with_findings']} of {d.get('evaluations', 0)} answers in the last"
            f" {d.get('window_hours')} h carry policy findings ({rules})"
            if d["with_findings"]
            else f": no policy findings in the last {d.get('window_hours')} h"
        )
    elif "silent_hours" in d:
        text += f": no scored records for {d['silent_hours']} h (usually {d['usual_per_day']}/day)"
    elif "direction" in d and "accuracy" in d:
        text += (
            f": judge {d['direction']}; on the sentinel set it flags {d['false_flag_rate']:.0%}"
            f" of supported answers and misses {d['miss_rate']:.0%} of unsupported ones"
        )
        if "reference_false_flag_rate" in d:
            text += (
                f" (was {d['reference_false_flag_rate']:.0%} and"
                f" {d['reference_miss_rate']:.0%} with {d['reference_judge']})"
            )
    return text + _health(d)


_STREAM_WORDS = {
    "unsupported": ("unsupported rate", "records"),
    "critical": ("critical-claim rate", "records"),
    "citation": ("miscited rate", "citing answers"),
    "retrieval": ("retrieval-miss rate", "answers with a measured context relevance"),
}


def _causes(d: Mapping[str, Any]) -> str:
    """Which half of the pipeline the bad answers point at: ``; mostly retrieval (11.0
    points of 14.0)``; nothing on the retrieval stream, whose every bad record is one."""
    causes = d.get("causes")
    dominant = d.get("dominant_cause")
    if not isinstance(causes, Mapping) or dominant not in causes or d.get("stream") == "retrieval":
        return ""
    points = float(causes[dominant]) * 100
    return f"; mostly {dominant} ({points:.1f} points of {float(d['current_rate']) * 100:.1f})"


def example_words(example: Mapping[str, Any]) -> str:
    """What is wrong with an alert's example trace, in one line: its claims, or the rules
    a policy finding hit (never a finding's text)."""
    said = [
        *example.get("unsupported_claims", ()),
        *(f"miscited: {c}" for c in example.get("miscited_claims", ())),
    ]
    if example.get("rules"):
        said.append("policy: " + ", ".join(example["rules"]))
    return "; ".join(said)


def _health(d: Mapping[str, Any]) -> str:
    """The words of faithmon's own failures (judge_error, ingest_error, judge_disagreement)."""
    cause = d.get("cause")
    if "kappa" in d and "answers" in d:
        return (
            f": the judge agrees with reviewers at kappa {d['kappa']} over {d['answers']}"
            f" reviewed answers (bound {d.get('bound')})"
        )
    if cause == "error_rate":
        return (
            f": {d.get('errors')} of the judge's last {d.get('evaluations')} evaluations failed"
            f" ({float(d.get('error_rate', 0)):.0%}, bound {float(d.get('bound', 0)):.0%})"
        )
    if cause == "blocked":
        return f": the endpoint refused the judge ({d.get('reason')}); scoring is paused"
    if cause == "silent":
        return f": no heartbeat for {d.get('silent_seconds')} s"
    if cause == "saving_fails":
        return (
            f": saving has failed since {d.get('failing_since')} ({d.get('error')});"
            f" {d.get('backlog')} records wait"
        )
    return ""


def deliver(sinks: Sequence[AlertSink], alerts: Iterable[Alert]) -> None:
    """Send each alert to each sink; one failing sink does not stop the others."""
    for alert in alerts:
        for sink in sinks:
            try:
                sink.send(alert)
            except Exception:
                logger.exception("faithmon: alert sink %s failed", type(sink).__name__)


def to_json(alert: Alert) -> dict[str, object]:
    return {
        "id": alert.id,
        "rule": alert.rule,
        "segment": dict(alert.segment),
        "state": alert.state,
        "severity": alert.severity,
        "opened_at": alert.opened_at.isoformat(),
        "updated_at": alert.updated_at.isoformat(),
        "resolved_at": alert.resolved_at.isoformat() if alert.resolved_at else None,
        "notified_at": alert.notified_at.isoformat() if alert.notified_at else None,
        "details": json.loads(json.dumps(alert.details, default=str)),
    }


def _when(value: object) -> datetime | None:
    return datetime.fromisoformat(value) if isinstance(value, str) else None


def from_json(value: Mapping[str, Any]) -> Alert:
    """The alert :func:`to_json` wrote (the outbox keeps alerts so)."""
    opened = _when(value["opened_at"])
    updated = _when(value["updated_at"])
    assert opened is not None and updated is not None
    return Alert(
        rule=str(value["rule"]),
        segment={str(k): str(v) for k, v in dict(value.get("segment") or {}).items()},
        state=value["state"],
        severity=str(value["severity"]),
        opened_at=opened,
        updated_at=updated,
        resolved_at=_when(value.get("resolved_at")),
        details=dict(value.get("details") or {}),
        id=value.get("id"),
        notified_at=_when(value.get("notified_at")),
    )
