"""An SMTP server on 127.0.0.1 (aiosmtpd) that keeps what it receives."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from aiosmtpd.controller import Controller
from aiosmtpd.handlers import Message


class Inbox(Message):
    def __init__(self) -> None:
        super().__init__()
        self.messages: list[Any] = []
        self.port = 0

    def handle_message(self, message: Any) -> None:
        self.messages.append(message)


@contextmanager
def smtp_inbox() -> Iterator[Inbox]:
    """An inbox served on a free loopback port (``inbox.port``) while the block runs."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    inbox = Inbox()
    inbox.port = port
    controller = Controller(inbox, hostname="127.0.0.1", port=port)
    controller.start()
    try:
        yield inbox
    finally:
        controller.stop()
