"""A client-side deadline on PostgreSQL calls: the last guard against a silent peer.

The server's statement timeout bounds a query the server runs; TCP keepalives and the
limit on unacknowledged sends bound a network that drops packets. Neither helps when
the peer acknowledges every byte and never answers (a frozen server, a proxy or load
balancer holding the connection): the call waits on its socket forever, and the
thread that made it (the receiver's saves, a worker's run) with it. So each call on
the socket (a statement, a commit or rollback, the pool's ping) is armed with a
deadline past the statement timeout, and a call still waiting then has its socket
shut down: the driver raises, the pool drops the connection, the caller retries on a
new one. Calls on a connection marked ``UNBOUNDED`` (schema upgrades) are not armed.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
from typing import Any

from sqlalchemy import Engine, event

logger = logging.getLogger(__name__)

UNBOUNDED = "faithmon_unbounded"
"""Execution option: this connection's calls may run as long as they need."""


class Watchdog:
    def __init__(self, seconds: float, clock: Any = time.monotonic) -> None:
        self._seconds = seconds
        self._clock = clock
        self._lock = threading.Lock()
        # id of the driver's connection → (deadline, a duplicate of its socket)
        self._armed: dict[int, tuple[float, int]] = {}
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None

    def arm(self, dbapi_connection: Any) -> None:
        try:
            fd = os.dup(dbapi_connection.fileno())
        except (OSError, AttributeError, ValueError):
            return  # closed, or no socket: nothing can wait on it
        with self._lock:
            earlier = self._armed.pop(id(dbapi_connection), None)
            self._armed[id(dbapi_connection)] = (self._clock() + self._seconds, fd)
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="faithmon-db-watch")
                self._thread.daemon = True
                self._thread.start()
        if earlier is not None:
            os.close(earlier[1])

    def disarm(self, dbapi_connection: Any) -> None:
        with self._lock:
            armed = self._armed.pop(id(dbapi_connection), None)
        if armed is not None:
            os.close(armed[1])

    def _run(self) -> None:
        while True:
            self._wake.wait(min(1.0, self._seconds / 4))
            self.check()

    def check(self) -> int:
        """Shut down every socket past its deadline; returns how many."""
        now = self._clock()
        with self._lock:
            late = [(key, fd) for key, (due, fd) in self._armed.items() if due <= now]
            for key, _ in late:
                del self._armed[key]
        for _, fd in late:
            try:
                with socket.socket(fileno=fd) as sock:  # closes the duplicate only
                    sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        if late:
            logger.warning(
                "faithmon: %d database call(s) outlasted %.0f s without an answer; "
                "their connections are closed",
                len(late),
                self._seconds,
            )
        return len(late)


def guard(engine: Engine, seconds: float) -> Watchdog:
    """Arm every call ``engine`` makes on a connection's socket with ``seconds``."""
    dog = Watchdog(seconds)

    def bounded(conn: Any) -> bool:
        return not conn.get_execution_options().get(UNBOUNDED, False)

    @event.listens_for(engine, "before_cursor_execute")
    def _before(conn: Any, _c: Any, _s: Any, _p: Any, _ctx: Any, _many: Any) -> None:
        if bounded(conn):
            dog.arm(conn.connection.dbapi_connection)

    @event.listens_for(engine, "after_cursor_execute")
    def _after(conn: Any, _c: Any, _s: Any, _p: Any, _ctx: Any, _many: Any) -> None:
        dog.disarm(conn.connection.dbapi_connection)

    @event.listens_for(engine, "handle_error")
    def _failed(context: Any) -> None:
        try:  # a connection that failed to open, or was invalidated, has none to disarm
            dbapi_connection = context.connection.connection.dbapi_connection
        except Exception:
            return
        if dbapi_connection is not None:
            dog.disarm(dbapi_connection)

    # A commit or rollback (and the pool's reset after it) stays armed until the
    # connection is back in the pool.
    for name in ("commit", "rollback"):

        @event.listens_for(engine, name)
        def _ending(conn: Any) -> None:
            if bounded(conn):
                dog.arm(conn.connection.dbapi_connection)

    @event.listens_for(engine, "checkin")
    def _returned(dbapi_connection: Any, _record: Any) -> None:
        if dbapi_connection is not None:
            dog.disarm(dbapi_connection)

    ping = engine.dialect.do_ping

    def do_ping(dbapi_connection: Any) -> bool:
        dog.arm(dbapi_connection)
        try:
            return ping(dbapi_connection)
        finally:
            dog.disarm(dbapi_connection)

    engine.dialect.do_ping = do_ping  # type: ignore[method-assign]
    return dog
