"""What the review API and page tests serve: a real server over a fresh store whose review
queue holds six items of three tenants (the first hostile and critical), with keys."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from faithmon.api.app import create_app
from faithmon.api.keys import key_hash, new_key
from faithmon.cli import wiring
from faithmon.config import Settings
from faithmon.ingest.pipeline import Pipeline
from faithmon.ingest.sampler import KeepAll
from faithmon.ingest.scrub import identity
from faithmon.jobs import score_pending
from faithmon.jobs.review import fill_queue
from faithmon.judge import OfflineJudge
from faithmon.model import Chunk, RagRecord
from faithmon.review.queue import QueuePolicy
from faithmon.store import Sessions
from faithmon.store import engine as store_engine
from faithmon.store import keys as store_keys
from faithmon.store import records as store_records
from faithmon.store import review as store_review
from tests.api.client import call_as
from tests.servers import serve_in_thread
from tests.timing import days_ago

JUDGE = OfflineJudge()
ONCE = QueuePolicy(sample_rate=1.0, low_share=1.0, double_share=0.0)
TWICE = QueuePolicy(sample_rate=1.0, low_share=1.0, double_share=1.0)
CONTEXT = "Order A17 shipped on 3 March by courier."
ANSWER = f"{CONTEXT} It arrives tomorrow by drone."
HOSTILE = '<script>window.pwned = 1</script><img src=x onerror="window.pwned = 2">'
TENANTS = ("acme", "globex", "acme", None, "acme", "globex")
REVIEWERS = ("ann", "bo", "cy", "dee", "eve", "flo", "gus")


@dataclass
class Served:
    url: str
    sessions: Sessions
    keys: dict[str, str]
    prefixes: dict[str, str]
    traces: list[str]
    """Every queued trace, most urgent first: the hostile critical one, then the rest
    (alike: two claims, the second unsupported)."""
    tenants: dict[str, str | None]

    def who(self, role: str) -> str:
        """How labels name the role's reviewer: its key's name, which is the role."""
        assert role in self.keys
        return role


def record(n: int, tenant: str | None, hostile: bool = False) -> RagRecord:
    """Two claims, the second unsupported; a hostile one also names a price the chunks do
    not give (critical: first in the queue) and says ``HOSTILE`` (a supported claim)."""
    extra = f" {HOSTILE}" if hostile else ""
    return RagRecord(
        trace_id=f"{n + 1:032x}",
        question=f"Where is order A17?{extra}",
        answer=f"{CONTEXT} It costs 40 euros.{extra}" if hostile else ANSWER,
        chunks=(Chunk(0, CONTEXT + extra, id=f"doc{extra}"), Chunk(1, "Couriers do not fly.")),
        labels={"model": "m1", "route": "orders", **({"tenant": tenant} if tenant else {})},
        started_at=days_ago(1) + timedelta(minutes=n),
    )


def queue_records(sessions: Sessions, batch: list[RagRecord], policy: QueuePolicy) -> None:
    with sessions.begin() as session:
        store_records.save_records(session, batch)
    score_pending(sessions, JUDGE)
    assert fill_queue(sessions, JUDGE.name, policy) == len(batch)


@contextmanager
def serve(database_url: str, keyed: bool = True) -> Iterator[Served]:
    """The app over real HTTP on a fresh store with the queue filled, and keys named for
    their roles: admin, reader (read only), acme and globex (tenant-bound reviewers), and
    REVIEWERS. Without ``keyed``, no key: the server is open (loopback, no key yet)."""
    engine = store_engine.make_engine(database_url)
    try:
        store_engine.upgrade(engine)
        sessions = store_engine.session_factory(engine)
        made = [record(n, t, hostile=n == 1) for n, t in enumerate(TENANTS)]
        queue_records(sessions, made, ONCE)
        with sessions() as session:
            # Alike items are ordered by when they were scored, which is not fixed.
            traces = [item.trace_id for item in store_review.queue(session)]
        assert traces[0] == made[1].trace_id
        keys, prefixes = {}, {}
        roles = (
            ("admin", ["admin"], None),
            ("reader", ["read"], None),
            ("acme", ["read", "review"], "acme"),
            ("globex", ["read", "review"], "globex"),
            *((name, ["read", "review"], None) for name in REVIEWERS),
        )
        with sessions.begin() as session:
            for role, scopes, tenant in roles if keyed else ():
                key, prefix = new_key()
                store_keys.create_key(session, prefix, key_hash(key), scopes, tenant, name=role)
                keys[role], prefixes[role] = key, prefix
        settings = Settings.from_env(
            {"FAITHMON_DATABASE_URL": database_url, "FAITHMON_SCRUB_KEY": "review-test-key-0123"}
        )
        auth = wiring.make_auth(settings, sessions, "127.0.0.1")
        pipeline = Pipeline(lambda batch: None, sampler=KeepAll(), scrubber=identity)
        app = create_app(pipeline, sessions=sessions, auth=auth)
        with serve_in_thread(app) as url:
            tenants = {r.trace_id: r.labels.get("tenant") for r in made}
            yield Served(url, sessions, keys, prefixes, traces, tenants)
    finally:
        engine.dispose()


call = call_as
"""(status, JSON or text) of a request as ``role``, with ``body`` sent as JSON."""


def label(served: Served, role: str, trace_id: str, *claims: tuple[int, str]) -> tuple[int, Any]:
    body = {"claims": [{"index": i, "verdict": v} for i, v in claims], "note": "checked"}
    return call(served, "POST", f"/api/v1/review/items/{trace_id}/labels", role, body)


def of(served: Served, tenant: str | None) -> list[str]:
    """The tenant's plain (not hostile) traces, most urgent first."""
    return [t for t in served.traces[1:] if served.tenants[t] == tenant]
