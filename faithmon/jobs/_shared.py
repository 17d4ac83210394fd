"""What every job shares: the stop signal and the lease owner."""

from __future__ import annotations

import logging
import os
import socket
import threading

logger = logging.getLogger(__name__)


# Set on SIGTERM: scoring stops claiming, queued calls are not sent and their
# records are given back, and the calls in flight finish and are saved.
STOPPING = threading.Event()


def worker_id() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"
