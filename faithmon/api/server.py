"""Running the receiver: uvicorn with a draining shutdown.

On the first SIGTERM or SIGINT the receiver keeps its socket open but answers
503 (with Retry-After) to every export and to /healthz, so load balancers and
exporters move on and retry; meanwhile it saves every buffered trace, and only
then does uvicorn close the socket and exit. Saving gets ``drain_seconds`` (a hung
database never answers): what is not saved by then stays in the spool and is
replayed at the next start. A second signal exits at once.

Idle connections close after ``KEEP_ALIVE_SECONDS``, set here explicitly
because the receiver's Retry-After is derived from it (see ``ingest.http``).
"""

from __future__ import annotations

import logging
import socket
import threading
from collections.abc import Callable
from types import FrameType

import uvicorn

from ..ingest.http import KEEP_ALIVE_SECONDS
from ..ingest.pipeline import Pipeline

logger = logging.getLogger(__name__)


class DrainingServer(uvicorn.Server):
    def __init__(
        self,
        config: uvicorn.Config,
        pipeline: Pipeline,
        before_drain: Callable[[], None],
        drain_seconds: float | None = None,
    ) -> None:
        super().__init__(config)
        self._pipeline = pipeline
        self._drain_seconds = drain_seconds
        self._before_drain = before_drain
        self._draining = threading.Event()
        self._hurried = False

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        if self._draining.is_set():
            self._hurried = True
            self._pipeline.hurry()
            super().handle_exit(sig, frame)
            return
        self._draining.set()
        logger.info("faithmon: draining on signal %d; answering 503 until saved", sig)

        def drain() -> None:
            try:
                self._before_drain()
                if self._pipeline.drain(self._drain_seconds):
                    saved = self._pipeline.stats["records"]
                    logger.info("faithmon: drained; %d records saved in all", saved)
                else:
                    why = (
                        "a second signal ended the drain"
                        if self._hurried
                        else f"saving outlasted the drain ({self._drain_seconds} s)"
                    )
                    logger.warning(
                        "faithmon: %s; what is not saved stays in the spool for the next start",
                        why,
                    )
            finally:
                self.should_exit = True

        threading.Thread(target=drain, name="faithmon-drain", daemon=True).start()


def config(app: object, host: str, port: int) -> uvicorn.Config:
    """uvicorn's settings for the receiver (tests serve with the same)."""
    return uvicorn.Config(
        app,  # type: ignore[arg-type]
        host=host,
        port=port,
        log_level="warning",
        timeout_keep_alive=KEEP_ALIVE_SECONDS,
    )


def listen(host: str, port: int) -> socket.socket:
    """The receiver's socket, bound before anything else starts: a port in use is then one
    line at once, not a log line saying it receives followed by uvicorn's exit."""
    address = host.strip("[]")
    family = socket.AF_INET6 if ":" in address else socket.AF_INET
    # IPPROTO_TCP, not 0: asyncio sets TCP_NODELAY on the accepted connections only then;
    # without it every reply on a kept-alive connection waits ~40 ms for a delayed ACK.
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((address, port))
    except OSError:
        sock.close()
        raise
    return sock


def serve(
    app: object,
    sock: socket.socket,
    pipeline: Pipeline,
    before_drain: Callable[[], None] = lambda: None,
    drain_seconds: float | None = None,
) -> None:
    host, port = sock.getsockname()[:2]
    server = DrainingServer(config(app, host, port), pipeline, before_drain, drain_seconds)
    server.run(sockets=[sock])
