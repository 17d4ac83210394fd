"""A TCP proxy on loopback that a test can cut: a database outage without stopping the server."""

from __future__ import annotations

import contextlib
import socket
import threading
from types import TracebackType


class CuttableProxy:
    """Forwards 127.0.0.1:<port> to a target; ``cut()`` drops every connection and refuses
    new ones until ``restore()``; ``hang()`` blackholes: connections stay open and are
    accepted, but nothing is forwarded either way (a database that never answers)."""

    def __init__(self, target_host: str, target_port: int) -> None:
        self._target = (target_host, target_port)
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port: int = self._listener.getsockname()[1]
        self._lock = threading.Lock()
        self._open: list[socket.socket] = []
        self._cut = False
        self._hung = False
        self._closed = False
        self.swallowed = 0  # bytes sent into the silence on connections made before hang()
        self._thread = threading.Thread(target=self._accept, daemon=True)
        self._thread.start()

    def __enter__(self) -> CuttableProxy:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def cut(self) -> None:
        with self._lock:
            self._cut = True
            for sock in self._open:
                _close(sock)
            self._open.clear()

    def hang(self) -> None:
        with self._lock:
            self._hung = True

    def restore(self) -> None:
        with self._lock:
            self._cut = False
            self._hung = False

    def close(self) -> None:
        self._closed = True
        self.cut()
        _close(self._listener)
        self._thread.join(timeout=5)

    def _accept(self) -> None:
        while not self._closed:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            with self._lock:
                refused, hung = self._cut, self._hung
            if refused:
                _close(client)
                continue
            if hung:  # accepted, then silence: read and drop what the client sends
                with self._lock:
                    self._open.append(client)
                threading.Thread(target=self._pump, args=(client, None), daemon=True).start()
                continue
            try:
                upstream = socket.create_connection(self._target, timeout=5)
            except OSError:
                _close(client)
                continue
            upstream.settimeout(None)
            with self._lock:
                self._open += [client, upstream]
            for source, sink in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pump, args=(source, sink), daemon=True).start()

    def _pump(self, source: socket.socket, sink: socket.socket | None) -> None:
        try:
            while data := source.recv(65536):
                if sink is not None and not self._hung:
                    sink.sendall(data)
                elif sink is not None:
                    self.swallowed += len(data)
        except OSError:
            pass
        finally:
            _close(source)
            if sink is not None:
                _close(sink)


def _close(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)
    sock.close()
