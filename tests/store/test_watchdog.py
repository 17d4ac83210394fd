"""The client-side deadline on database calls: a socket past it is shut down, a call that
ended leaves nothing armed, a schema upgrade is never bounded."""

from __future__ import annotations

import os
import socket
import threading
from collections.abc import Iterator

import pytest
from sqlalchemy import text

from faithmon.store import engine as store_engine
from faithmon.store import watchdog
from faithmon.store.watchdog import Watchdog


class Peer:
    """One end of a socket pair, as a driver's connection shows its socket."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock

    def fileno(self) -> int:
        return self.sock.fileno()


@pytest.fixture
def pair() -> Iterator[tuple[socket.socket, socket.socket]]:
    ours, theirs = socket.socketpair()
    yield ours, theirs
    ours.close()
    theirs.close()


def open_fds(of: socket.socket) -> int:
    """The descriptors open on ``of``'s socket (it and its duplicates): other threads of the
    test process may open and close descriptors of their own meanwhile."""
    inode = os.fstat(of.fileno()).st_ino
    count = 0
    for name in os.listdir("/proc/self/fd"):
        try:
            count += os.fstat(int(name)).st_ino == inode
        except OSError:
            continue  # closed since it was listed (the listing's own descriptor, for one)
    return count


def test_a_call_past_its_deadline_has_its_socket_shut(
    pair: tuple[socket.socket, socket.socket],
) -> None:
    """A read waiting on a peer that never answers returns once the deadline passes."""
    ours, _silent = pair
    now = [0.0]
    dog = Watchdog(5.0, clock=lambda: now[0])
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(ours.recv(10)))
    dog.arm(Peer(ours))
    reader.start()
    now[0] = 4.9
    assert dog.check() == 0
    now[0] = 5.1
    assert dog.check() == 1
    reader.join(30)
    assert got == [b""]  # the wait ended, and the socket object itself is still open
    assert ours.fileno() >= 0


def test_an_ended_call_leaves_nothing_armed(pair: tuple[socket.socket, socket.socket]) -> None:
    """Disarming closes the watchdog's duplicate of the socket: no descriptor leaks."""
    ours, _ = pair
    now = [0.0]
    dog = Watchdog(5.0, clock=lambda: now[0])
    before = open_fds(ours)
    for _ in range(100):
        # One connection object per call, as a driver's: the watchdog knows a connection
        # by its identity, and temporaries may or may not share one.
        peer = Peer(ours)
        dog.arm(peer)
        dog.arm(peer)  # armed again before it ended: one entry, one duplicate
        dog.disarm(peer)
    conn = Peer(ours)
    dog.arm(conn)
    dog.arm(conn)
    dog.disarm(conn)
    assert open_fds(ours) == before
    now[0] = 100.0
    assert dog.check() == 0


@pytest.mark.postgres
def test_postgresql_calls_are_armed_only_while_they_run(postgres_url: str) -> None:
    """Statements, commits and the pool's ping leave nothing armed once they end; an
    upgrade's connection is never armed (a migration may run long)."""
    engine = store_engine.make_engine(postgres_url, statement_timeout=0)
    dog = watchdog.guard(engine, 60.0)
    armed: list[int] = []
    arm = dog.arm

    def counting(connection: object) -> None:
        armed.append(1)
        arm(connection)

    dog.arm = counting  # type: ignore[method-assign]
    try:
        sessions = store_engine.session_factory(engine)
        for _ in range(3):
            with sessions() as session, session.begin():
                session.execute(text("SELECT 1"))
        assert armed and dog._armed == {}
        armed.clear()
        store_engine.upgrade(engine)
        assert len(armed) <= 1  # the pool's ping on checkout, not the migration's statements
        assert dog._armed == {}
    finally:
        engine.dispose()
