"""A replay of drifting traffic through the drift job, a rules file's grouped routes and
real receivers on 127.0.0.1 (a signed webhook and a Slack-format listener): model m2
drifts, recovers, drifts again within the repeat interval and recovers; each route pages
once for the incident and tells its end once, where plain delivery pages twice."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy.orm import Session, sessionmaker

from faithmon.alerts import ListSink, Policy
from faithmon.alerts.routing import build_router
from faithmon.alerts.rules import load
from faithmon.alerts.sinks import SinkOptions
from faithmon.jobs import check_drift, notify
from faithmon.model import AlertSink, RagRecord
from tests.alerts.factory import SECRET, Receiver, serving
from tests.jobs.factory import BAD, CONFIG, CONTEXT, JUDGE, T0, record, save_and_score

# The dialect is not the point here: PostgreSQL runs in the second_backend tier.
pytestmark = pytest.mark.one_backend

RULES = """
[sinks.oncall]
type = "webhook"
url = "{url}/oncall"
secret_env = "ONCALL_SECRET"

[sinks.chat]
type = "slack"
url = "{url}/chat"

[[routes]]
match = ["kind=faithfulness_drift", "severity=critical"]
sinks = ["oncall"]
continue = true
group_by = ["kind", "model"]
repeat_interval = "4h"

[[routes]]
match = []
sinks = ["chat"]
group_by = ["..."]
group_wait = "30s"
group_interval = "5m"
"""

# Per drift run, ten minutes apart: what arrives before it.
PLAN = ["drift", "recover", "", "", "drift", "", "recover", "", ""]


def traffic(first: int, what: str) -> list[RagRecord]:
    if what == "drift":
        return [
            record(first + n, BAD if n % 4 == 1 else CONTEXT, route="a", model=("m1", "m2")[n % 2])
            for n in range(80)
        ]
    if what == "recover":
        return [record(first + n, CONTEXT, route="a", model="m2") for n in range(60)]
    return []


def replay(
    sessions: sessionmaker[Session],
    sinks: list[AlertSink],
    flush: Callable[[datetime], None] | None = None,
    clock: list[datetime] | None = None,
) -> None:
    """Run PLAN; ``clock`` follows the drift runs' time (what the outbox stamps)."""
    clock = clock if clock is not None else [T0]
    save_and_score(sessions, [record(n, CONTEXT, route="a", model="m1") for n in range(60)])
    sent = 60
    for step, what in enumerate(PLAN):
        batch = traffic(sent, what)
        if batch:
            save_and_score(sessions, batch)
            sent += len(batch)
        clock[0] = T0 + timedelta(minutes=10 * step)
        policy = Policy(recovery_runs=2)
        check_drift(sessions, JUDGE.name, CONFIG, sinks=sinks, now=lambda: clock[0], policy=policy)
        if flush is not None:
            flush(clock[0] + timedelta(minutes=1))


def test_plain_delivery_pages_for_each_flap(sessions: sessionmaker[Session]) -> None:
    """Without grouped routes the sink hears every change: two pages for one incident."""
    sink = ListSink()
    replay(sessions, [sink])
    states = [a.state for a in sink.alerts if a.segment == {"model": "m2"}]
    assert states == ["firing", "resolved", "firing", "resolved"]


def test_each_grouped_route_pages_once_per_incident(
    sessions: sessionmaker[Session], tmp_path: Path
) -> None:
    """The webhook route and the Slack route each carry m2's firing once and its end once."""
    with serving() as receiver:
        path = tmp_path / "rules.toml"
        path.write_text(RULES.format(url=receiver.url))
        env = {"ONCALL_SECRET": SECRET}
        router = build_router(load(str(path), env), SinkOptions(), env)
        clock = [T0]
        router.queue_to(notify.outbox(sessions, lambda: clock[0]))

        def flush(now: datetime) -> None:
            notify.flush(sessions, router, now)

        replay(sessions, [router], flush, clock)
        pages = told(receiver)
    assert pages["/oncall"] == Counter({"firing": 1, "resolved": 1})
    assert pages["/chat"] == Counter({"firing": 1, "resolved": 1})


def told(receiver: Receiver) -> dict[str, Counter[str]]:
    """Per receiver path, the states told of m2's incident."""
    out: dict[str, Counter[str]] = {"/oncall": Counter(), "/chat": Counter()}
    for item in receiver.received:
        body = json.loads(item.body)
        if item.path == "/oncall":
            for entry in body["alerts"]:
                if entry["alert"]["segment"] == {"model": "m2"}:
                    out["/oncall"][entry["alert"]["state"]] += 1
        else:
            for state in ("firing", "resolved"):
                out["/chat"][state] += body["text"].count(f"[{state}] model=m2")
    return out
