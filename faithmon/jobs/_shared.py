"""What every job shares: the stop signal, the lease owner, and turning signals into
alert changes."""

from __future__ import annotations

import logging
import os
import socket
import threading
from collections.abc import Callable, Sequence
from datetime import datetime

from ..alerts import Policy, reconcile
from ..model import Alert, Signal
from ..store import Session
from ..store import alerts as store_alerts

logger = logging.getLogger(__name__)


# Set on SIGTERM: scoring stops claiming, queued calls are not sent and their
# records are given back, and the calls in flight finish and are saved.
STOPPING = threading.Event()


def worker_id() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def reconcile_kinds(
    session: Session,
    rules: Sequence[str],
    ours: Callable[[Alert], bool],
    signals: Callable[[list[Alert]], Sequence[Signal]],
    clock: datetime,
    policy: Policy,
) -> list[Alert]:
    """Turn the signals of alert kinds ``rules`` into stored alert changes: ``ours`` picks
    this job's alerts among them (another job may raise the same kind), ``signals`` is
    given their open ones. The caller delivers what is to be told, after its commit.

    The alerts are read locked until that commit: each is written back whole, and an
    acknowledgement or mute made in between would otherwise be lost."""
    found = store_alerts.open_alerts(session, *rules, lock=True)
    open_alerts = [a for a in found if ours(a)]
    since = clock - policy.cooldown
    recent = store_alerts.resolved_alerts(session, rules, since=since, lock=True)
    return store_alerts.save_alerts(
        session,
        reconcile(open_alerts, signals(open_alerts), clock, policy, [a for a in recent if ours(a)]),
    )
