"""The notify job sends each grouped route's group as one message through real sinks on
127.0.0.1, keeping the outbox and the groups' state in a real store (SQLite and
PostgreSQL): one signed webhook per group after group_wait, the next after
group_interval, a silence added while a group waits honoured at sending time, and the
waiting alerts of a route taken out of the file dropped with a log line."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy.orm import Session, sessionmaker

from faithmon.alerts.routing import Router, build_router
from faithmon.alerts.rules import load
from faithmon.alerts.sinks import SinkOptions, sign
from faithmon.jobs import notify
from faithmon.model import Alert
from faithmon.model.silences import Silence
from faithmon.store import outbox as store_outbox
from tests.alerts.factory import SECRET, Receiver, serving
from tests.timing import days_ago

# The dialect is not the point here: PostgreSQL runs in the second_backend tier.
pytestmark = pytest.mark.one_backend

T0 = days_ago(1, hour=9)
RULES = """
[sinks.hook]
type = "webhook"
url = "{url}/hook"
secret_env = "HOOK_SECRET"

[[routes]]
match = ["kind=faithfulness_drift"]
sinks = ["hook"]
group_by = ["tenant"]
group_wait = "30s"
group_interval = "5m"
"""


def alert(tenant: str, model: str, minutes: float = 0) -> Alert:
    when = T0 + timedelta(minutes=minutes)
    return Alert(
        rule="faithfulness_drift",
        segment={"tenant": tenant, "model": model},
        state="firing",
        severity="critical",
        opened_at=when,
        updated_at=when,
        details={"current_rate": 0.3, "baseline_rate": 0.05, "records": 80},
    )


def make_router(
    tmp_path: Path, receiver: Receiver, sessions: sessionmaker[Session]
) -> tuple[Router, list[datetime]]:
    path = tmp_path / "rules.toml"
    path.write_text(RULES.format(url=receiver.url))
    env = {"HOOK_SECRET": SECRET}
    router = build_router(load(str(path), env), SinkOptions(), env)
    clock = [T0]
    router.queue_to(notify.outbox(sessions, lambda: clock[0]))
    return router, clock


def bodies(receiver: Receiver) -> list[dict[str, Any]]:
    return [json.loads(r.body) for r in receiver.received]


def test_one_signed_message_per_group_after_its_wait_then_its_interval(
    sessions: sessionmaker[Session], tmp_path: Path
) -> None:
    """Three acme alerts and one globex alert make two messages once group_wait has
    passed; a later acme alert waits for acme's group_interval."""
    with serving() as receiver:
        router, clock = make_router(tmp_path, receiver, sessions)
        for model in ("m1", "m2", "m3"):
            router.send(alert("acme", model))
        clock[0] = T0 + timedelta(seconds=10)
        router.send(alert("globex", "m2"))
        assert receiver.received == []
        assert notify.flush(sessions, router, T0 + timedelta(seconds=35)) == 1  # acme only
        assert notify.flush(sessions, router, T0 + timedelta(seconds=45)) == 1  # then globex
        acme, globex = bodies(receiver)
        assert acme["type"] == "alert.group" and acme["group"]["labels"] == {"tenant": "acme"}
        assert [a["alert"]["segment"]["model"] for a in acme["alerts"]] == ["m1", "m2", "m3"]
        assert [a["alert"]["segment"]["tenant"] for a in globex["alerts"]] == ["globex"]
        first = receiver.received[0]
        stamp = int(first.headers["webhook-timestamp"])
        expected = sign(SECRET, first.headers["webhook-id"], stamp, first.body)
        assert first.headers["webhook-signature"] == expected

        clock[0] = T0 + timedelta(minutes=1)
        router.send(alert("acme", "m4", minutes=1))
        assert notify.flush(sessions, router, T0 + timedelta(minutes=3)) == 0
        assert notify.flush(sessions, router, T0 + timedelta(minutes=6)) == 1
        assert [a["alert"]["segment"]["model"] for a in bodies(receiver)[2]["alerts"]] == ["m4"]
        # Nothing waits any more, and a repeat of a told incident is not sent again.
        clock[0] = T0 + timedelta(minutes=20)
        router.send(alert("acme", "m4", minutes=20))
        assert notify.flush(sessions, router, T0 + timedelta(minutes=21)) == 0
        with sessions() as session:
            assert store_outbox.waiting(session) == []
        assert len(receiver.received) == 3


def test_a_silence_added_while_a_group_waits_holds_its_alert(
    sessions: sessionmaker[Session], tmp_path: Path
) -> None:
    """The silence is asked again at sending time: the silenced alert is left out and
    recorded, and is told once a later flush finds no silence."""
    silence = Silence(("model=m2",), T0, T0 + timedelta(hours=1), "rollout", "me", T0, id=5)
    muted: list[tuple[str, int | None]] = []

    def silenced(a: Alert) -> Silence | None:
        return silence if a.segment.get("model") == "m2" and silence.expired_at is None else None

    with serving() as receiver:
        router, clock = make_router(tmp_path, receiver, sessions)
        router.send(alert("acme", "m1"))
        router.send(alert("acme", "m2"))
        sent = notify.flush(
            sessions,
            router,
            T0 + timedelta(minutes=1),
            silenced,
            lambda a, s: muted.append((a.segment["model"], s.id)),
        )
        assert sent == 1 and muted == [("m2", 5)]
        (body,) = bodies(receiver)
        assert [a["alert"]["segment"]["model"] for a in body["alerts"]] == ["m1"]
        silence = replace(silence, expired_at=T0 + timedelta(minutes=2))
        clock[0] = T0 + timedelta(minutes=2)
        router.send(alert("acme", "m2", minutes=2))  # what notify_after_silences re-tells
        assert notify.flush(sessions, router, T0 + timedelta(minutes=7), silenced) == 1
        assert [a["alert"]["segment"]["model"] for a in bodies(receiver)[1]["alerts"]] == ["m2"]


def test_alerts_of_a_route_no_longer_in_the_file_are_dropped(
    sessions: sessionmaker[Session], tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """An edited rules file makes a new route: what the old one kept is dropped, said once
    in the log, and the outbox empties."""
    with serving() as receiver:
        router, _ = make_router(tmp_path, receiver, sessions)
        router.send(alert("acme", "m1"))
        other = Router((), {})
        assert notify.flush(sessions, other, T0 + timedelta(minutes=1)) == 0
        assert "no longer in the rules file" in caplog.text
        with sessions() as session:
            assert store_outbox.waiting(session) == []
        assert receiver.received == []


def test_the_worker_sends_a_grouped_route_once_its_group_is_due(
    database_url: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """`worker --once` with a rules file: a silent receiver's ingest_error waits in the
    outbox through the run that raised it (group_wait not over), and a later run sends it
    as one signed group message; the run after that sends nothing."""
    from click.testing import CliRunner

    from faithmon.cli import main
    from faithmon.model.health import ReceiverStatus
    from faithmon.store import engine as store_engine
    from faithmon.store import receivers as store_receivers
    from tests.timing import wait_for

    with serving() as receiver:
        rules = tmp_path / "rules.toml"
        rules.write_text(
            RULES.replace('["kind=faithfulness_drift"]', '["kind=ingest_error"]')
            .replace('group_wait = "30s"', 'group_wait = "1s"')
            .format(url=receiver.url)
        )
        for name, value in {
            "FAITHMON_DATABASE_URL": database_url,
            "FAITHMON_ALERT_RULES": str(rules),
            "HOOK_SECRET": SECRET,
        }.items():
            monkeypatch.setenv(name, value)
        monkeypatch.chdir(tmp_path)  # the worker's heartbeat file
        engine = store_engine.make_engine(database_url)
        store_engine.upgrade(engine)
        now = datetime.now(UTC)
        with store_engine.session_factory(engine).begin() as session:
            store_receivers.beat(
                session,
                ReceiverStatus("rx-9:4318", now - timedelta(hours=2), now - timedelta(hours=1)),
            )
        engine.dispose()
        runner = CliRunner()

        def run() -> int:
            result = runner.invoke(main, ["worker", "--once", "--json"])
            assert result.exit_code == 0, result.output
            return int(json.loads(result.stdout)["group_messages"])

        assert run() == 0 and receiver.received == []
        wait_for(lambda: run() == 1, 30, "the group sent by a later run")
        (body,) = bodies(receiver)
        assert [a["alert"]["rule"] for a in body["alerts"]] == ["ingest_error"]
        assert run() == 0 and len(receiver.received) == 1
