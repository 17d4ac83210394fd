"""Silences at delivery: :class:`Muted` wraps a sink and drops the notifications of alerts an
active silence matches (the alert is still stored and changes state; only the message
stops), and :func:`due_after_silence` finds the firing alerts to tell once their silence
has ended.

Wiring, in the drift job: load the silences that run now, wrap each sink in
``Muted(sink, silencer(silences, now), on_muted)`` where ``on_muted`` records the mute on
the alert (``store.silences.mark_muted``); after delivering, pass the open alerts and the
silences (those running and those ended since the last run) to :func:`due_after_silence`,
deliver what it returns and record it told (``store.silences.mark_told``).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime, timedelta

from ..model import Alert, AlertSink
from ..model.silences import MUTED_AT, Silence
from .matchers import Matcher, alert_labels, match_all, parse, parse_all

logger = logging.getLogger(__name__)


def _matchers(silence: Silence) -> tuple[Matcher, ...] | None:
    try:
        return parse_all(silence.matchers)
    except ValueError:
        # Checked when it was made; one that no longer parses silences nothing.
        return None


def silenced_by(
    silences: Iterable[Silence], labels: Mapping[str, str], now: datetime
) -> Silence | None:
    """The first silence active at ``now`` whose every matcher holds for ``labels``."""
    for silence in silences:
        if silence.state(now) != "active":
            continue
        matchers = _matchers(silence)
        # A silence with no matcher would silence everything: never made, never honoured.
        if matchers and match_all(matchers, labels):
            return silence
    return None


def silencer(silences: Sequence[Silence], now: datetime) -> Callable[[Alert], Silence | None]:
    """What :class:`Muted` asks: the silence that stops this alert's notification, if any."""
    kept = tuple(silences)
    return lambda alert: silenced_by(kept, alert_labels(alert), now)


class Muted:
    """An :class:`AlertSink` that drops the notifications a silence covers.

    ``silenced`` names the silence stopping an alert (None: send it); ``on_muted`` is told
    of each dropped notification (to record it on the alert)."""

    def __init__(
        self,
        inner: AlertSink,
        silenced: Callable[[Alert], Silence | None],
        on_muted: Callable[[Alert, Silence], None] | None = None,
    ) -> None:
        self.inner, self._silenced, self._on_muted = inner, silenced, on_muted

    def send(self, alert: Alert) -> None:
        silence = self._silenced(alert)
        if silence is None:
            self.inner.send(alert)
            return
        logger.info(
            "faithmon: alert %s not sent to %s: silence %s",
            alert.id,
            type(self.inner).__name__,
            silence.id,
        )
        if self._on_muted is not None:
            self._on_muted(alert, silence)


def muted(
    sinks: Iterable[AlertSink],
    silenced: Callable[[Alert], Silence | None],
    on_muted: Callable[[Alert, Silence], None] | None = None,
) -> list[AlertSink]:
    """Every sink wrapped in :class:`Muted`."""
    return [Muted(sink, silenced, on_muted) for sink in sinks]


def _at(value: object) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        return datetime.fromisoformat(value)
    except ValueError:
        return None


def _was_muted(alert: Alert, silences: Sequence[Silence], labels: Mapping[str, str]) -> bool:
    told = alert.notified_at
    if told is None:
        return False
    muted_at = _at(alert.details.get(MUTED_AT))
    if muted_at is not None:
        return told <= muted_at
    # No mark (a later change of the alert may have replaced its details): its last
    # notification fell inside a silence that matches it, so that silence stopped it.
    for silence in silences:
        start = max(silence.starts_at, silence.created_at)
        matchers = _matchers(silence)
        if matchers and start <= told < silence.ends_at and match_all(matchers, labels):
            return True
    return False


def due_after_silence(
    open_alerts: Iterable[Alert], silences: Sequence[Silence], now: datetime
) -> list[Alert]:
    """The firing alerts whose last notification a silence stopped, that no silence stops
    now, and that the sinks have not heard of since: each is to be told once.

    ``silences``: those running at ``now`` and those that ended since the last call."""
    due = []
    for alert in open_alerts:
        if alert.state != "firing":
            continue
        labels = alert_labels(alert)
        if silenced_by(silences, labels, now) is not None:
            continue
        if _was_muted(alert, silences, labels):
            due.append(alert)
    return due


def _escape(value: str) -> str:
    """A regex matching exactly ``value``; spaces and quotes as code points, since a
    matcher's value loses those at its ends."""
    return "".join(f"\\U{ord(c):08x}" if c.isspace() or c == '"' else re.escape(c) for c in value)


def segment_matchers(alert: Alert) -> list[str]:
    """Matchers for exactly this alert's segment and kind ("mute this segment"): equality,
    or an escaped whole-value regex for a value the ``name=value`` form cannot carry.
    ValueError when a label cannot be matched exactly (a wider silence is never made)."""
    labels = {**dict(alert.segment), "kind": alert.rule}
    texts = []
    for name, value in sorted(labels.items()):
        for text in (f"{name}={value}", f"{name}=~{_escape(value)}"):
            try:
                if parse(text).matches(labels) and parse(text).name == name:
                    texts.append(text)
                    break
            except ValueError:
                continue
        else:
            raise ValueError(f"label {name!r} cannot be matched exactly")
    return texts


def make_silence(
    matchers: Sequence[str],
    ends: timedelta | datetime,
    comment: str,
    by: str,
    now: datetime,
    starts_at: datetime | None = None,
    tenant: str | None = None,
) -> Silence:
    """A new silence, checked: ValueError with one line saying what is wrong.

    ``ends`` is a duration from the start or the end itself. A tenant-bound maker's
    silence always carries ``tenant=<its tenant>``, so it can mute only that tenant."""
    texts = [m.strip() for m in matchers if m.strip()]
    if tenant is not None and f"tenant={tenant}" not in texts:
        texts.append(f"tenant={tenant}")
    if not texts:
        raise ValueError("a silence needs at least one matcher (name=value)")
    parse_all(texts)
    if not comment.strip():
        raise ValueError("a silence needs a comment saying why")
    start = starts_at or now
    try:
        end = start + ends if isinstance(ends, timedelta) else ends
    except OverflowError:
        raise ValueError("that silence would end after the year 9999") from None
    if end <= start:
        raise ValueError("a silence must end after it starts")
    if end <= now:
        raise ValueError("that silence would already be over")
    return Silence(
        matchers=tuple(texts),
        starts_at=start,
        ends_at=end,
        comment=comment.strip(),
        created_by=by,
        created_at=now,
        tenant=tenant,
    )


def to_json(silence: Silence, now: datetime) -> dict[str, object]:
    return {
        "id": silence.id,
        "matchers": list(silence.matchers),
        "state": silence.state(now),
        "starts_at": silence.starts_at.isoformat(),
        "ends_at": silence.ends_at.isoformat(),
        "comment": silence.comment,
        "created_by": silence.created_by,
        "created_at": silence.created_at.isoformat(),
        "expired_at": silence.expired_at.isoformat() if silence.expired_at else None,
        "tenant": silence.tenant,
    }
