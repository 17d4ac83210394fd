"""The detectors' state as plain JSON, the form the store keeps it in between runs."""

from __future__ import annotations

from collections import deque
from datetime import datetime
from typing import Any

from .state import DriftState, Live, Reset, Segment

FORMAT = 5
"""Bumped when the state's meaning changes: a stored state of another format is rebuilt.
4: segment keys escape ``%``, ``,`` and ``=``, so a state keyed before is rebuilt under the
keys made now rather than kept beside them. 5: the retrieval stream, and the causes of
each detector's bad records."""


def _at(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


def _dt(value: str | None) -> datetime | None:
    return datetime.fromisoformat(value) if value else None


def _need(value: str) -> datetime:
    return datetime.fromisoformat(value)


def dump(state: DriftState) -> dict[str, Any]:
    """Plain JSON data sharing nothing with ``state`` (a state loaded from it is a copy)."""
    return {
        "format": FORMAT,
        "watermark": state.watermark,
        "newest": _at(state.newest),
        "horizon": _at(state.horizon),
        "segments": {
            key: [
                dict(s.segment),
                s.root,
                s.seen,
                _at(s.first_at),
                s.after,
                dict(s.free),
                {stream: dict(rest) for stream, rest in s.rest.items()},
                s.cited,
                s.measured,
            ]
            for key, s in state.segments.items()
        },
        "members": {root: list(keys) for root, keys in state.members.items()},
        "live": {
            key: [
                live.n,
                live.weight,
                live.bad,
                live.statistic,
                _at(live.change_at),
                _at(live.last_at),
                [[int(bad), weight] for bad, weight in live.recent],
                [[int(c), at.isoformat(), seq, cause] for c, at, seq, cause in live.examples],
                dict(live.causes),
            ]
            for key, live in state.live.items()
        },
        "since": {key: at.isoformat() for key, at in state.since.items()},
        "resets": [[r.stream, dict(r.segment), r.at.isoformat()] for r in state.resets.values()],
        "labelsets": {
            k: [dict(labels), at.isoformat()] for k, (labels, at) in state.labelsets.items()
        },
        "quiet": {
            key: [
                [h.isoformat(), n, first.isoformat(), last.isoformat()]
                for h, (n, first, last) in b.items()
            ]
            for key, b in state.quiet.items()
        },
        "quiet_segments": {k: dict(v) for k, v in state.quiet_segments.items()},
    }


def load(data: dict[str, Any], recovery_records: int) -> DriftState | None:
    """The state, or None when it was written in another format (rebuild it); it shares
    nothing with ``data``."""
    if data.get("format") != FORMAT:
        return None
    state = DriftState(
        watermark=int(data["watermark"]), newest=_dt(data["newest"]), horizon=_dt(data["horizon"])
    )
    for key, (segment, root, seen, first_at, after, free, rest, cited, measured) in data[
        "segments"
    ].items():
        state.segments[key] = Segment(
            dict(segment),
            root,
            seen,
            _dt(first_at),
            after,
            cited,
            measured,
            dict(free),
            {stream: dict(values) for stream, values in rest.items()},
        )
    state.members = {root: list(keys) for root, keys in data["members"].items()}
    for key, (n, weight, bad, statistic, change_at, last_at, recent, examples, causes) in data[
        "live"
    ].items():
        state.live[key] = Live(
            n,
            weight,
            bad,
            statistic,
            _dt(change_at),
            _dt(last_at),
            deque(((bool(b), w) for b, w in recent), maxlen=recovery_records),
            [(bool(c), _need(at), seq, cause) for c, at, seq, cause in examples],
            dict(causes),
        )
    state.since = {key: _need(at) for key, at in data["since"].items()}
    resets = [Reset(stream, segment, _need(at)) for stream, segment, at in data["resets"]]
    state.resets = {r.key: r for r in resets}
    state.labelsets = {
        k: (dict(labels), _need(at)) for k, (labels, at) in data["labelsets"].items()
    }
    state.quiet = {
        key: {_need(h): [n, _need(first), _need(last)] for h, n, first, last in buckets}
        for key, buckets in data["quiet"].items()
    }
    state.quiet_segments = {k: dict(v) for k, v in data["quiet_segments"].items()}
    return state
