"""Reading an input file a person named (`faithmon score`, `faithmon gate`): UTF-8 text,
or ``-`` for stdin; what cannot be read is one line saying why."""

from __future__ import annotations

import sys
from pathlib import Path

import click


class UnreadableInput(click.ClickException):
    """The file cannot be read, or is not UTF-8 text (the message says which, and where)."""


def read_lines(file: Path) -> list[str]:
    """The file's lines; a file that is not UTF-8 text is one line naming where it breaks."""
    data = sys.stdin.buffer.read() if str(file) == "-" else _read_bytes(file)
    try:
        return data.decode("utf-8-sig").splitlines()
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise UnreadableInput(
            f"{file}: not UTF-8 text (byte 0x{data[exc.start]:02x} on line {line}); "
            "save it as UTF-8 JSONL"
        ) from None


def _read_bytes(file: Path) -> bytes:
    try:
        return file.read_bytes()
    except OSError as exc:
        raise UnreadableInput(f"cannot read {file}: {exc.strerror}") from None
