"""The ``policy_violation`` signals: per segment, the evaluations of a recent window that
carry policy findings (a disclosure an answer must never contain; see
:mod:`faithmon.judge.policy`). They carry the rules hit with their counts and example
trace ids, never what was found: that is an excerpt of an answer.

One leaked address is in every segment of its record (overall, its route, its model,
...). As drift attributes, the most concentrated labelled segment (the largest share of
its evaluations flagged) raises the alert, and a segment whose flagged evaluations are
all in segments already raised of its partition is *explained* by them and raises none.
A partition's overall comes last: it raises only for findings in records no labelled
segment holds. An alert resolves when a window passes without findings in its segment,
or when another segment explains it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import timedelta
from typing import Any

from ..model import Alert, SegmentFindings, Signal, segment_key

RULE = "policy_violation"


def _details(found: SegmentFindings, window: timedelta) -> dict[str, Any]:
    return {
        "window_hours": round(window.total_seconds() / 3600, 2),
        "evaluations": found.evaluations,
        "with_findings": len(found.flagged),
        "share": round(found.share, 4),
        "rules": [
            {"rule": r.rule, "answers": r.answers, "findings": r.findings} for r in found.rules
        ],
        "examples": [{"trace_id": t, "rules": list(rules)} for t, rules in found.examples],
    }


def violation_signals(
    found: Sequence[SegmentFindings], open_alerts: Iterable[Alert], window: timedelta
) -> list[Signal]:
    """A firing signal per segment whose findings no more concentrated one explains; ok
    for those explained, and for every open alert's segment without findings now."""
    ranked = sorted(
        (f for f in found if f.flagged),
        key=lambda f: (
            segment_key(f.segment) == f.root,
            -f.share,
            f.evaluations,
            segment_key(f.segment),
        ),
    )
    raised: dict[str, list[SegmentFindings]] = {}
    signals: list[Signal] = []
    for item in ranked:
        roots = raised.setdefault(item.root, [])
        covered = frozenset().union(*(r.flagged for r in roots))
        details = _details(item, window)
        if roots and item.flagged <= covered:
            by = max(roots, key=lambda r: len(r.flagged & item.flagged))
            details["explained_by"] = dict(by.segment)
            signals.append(Signal(RULE, dict(item.segment), "ok", details, "critical"))
            continue
        roots.append(item)
        signals.append(Signal(RULE, dict(item.segment), "firing", details, "critical"))
    seen = {segment_key(f.segment) for f in ranked}
    quiet = {"window_hours": round(window.total_seconds() / 3600, 2), "with_findings": 0}
    for alert in open_alerts:
        if alert.rule == RULE and segment_key(alert.segment) not in seen:
            seen.add(segment_key(alert.segment))
            signals.append(Signal(RULE, dict(alert.segment), "ok", dict(quiet), "critical"))
    return signals
