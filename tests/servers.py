"""Run an ASGI app on a real loopback socket in a background thread."""

from __future__ import annotations

import socket
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import uvicorn


@contextmanager
def serve_in_thread(
    app: Any, config: Callable[[Any, str, int], uvicorn.Config] | None = None
) -> Iterator[str]:
    """Yield the base URL of ``app`` served by uvicorn on 127.0.0.1.

    The socket is bound and listening before the thread starts, so clients can
    connect at once: the kernel queues them until uvicorn accepts. ``config``
    builds uvicorn's settings from (app, host, port) (faithmon's own: serving.config).
    """
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    # Accepted sockets inherit it: without it each keep-alive reply waits ~40 ms.
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)
    port = sock.getsockname()[1]
    settings = (
        uvicorn.Config(app, log_level="warning", lifespan="off")
        if config is None
        else config(app, "127.0.0.1", port)
    )
    server = uvicorn.Server(settings)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()
