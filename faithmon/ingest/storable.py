"""Make a record storable before the store sees it, the same on SQLite and PostgreSQL.

One value a database refuses must never stop ingest: PostgreSQL rejects NUL in
text and in JSONB, NaN and infinities in JSONB, lone surrogates in any text, and
strings longer than a bounded column. Each is repaired here, and each repair is
listed on the record (``repairs``), so nothing is changed silently:

- NUL characters are removed, lone surrogates become U+FFFD;
- a non-finite number becomes null (a chunk score, or a number in metadata);
- a value longer than its column is cut, with a marker saying how much was cut.

Repairs name the field and what was done, never the value.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from ..model import Chunk, Feedback, RagRecord

# Bounded columns (faithmon/store/tables/) and the segment keys labels become.
KEEP_REASON_CHARS = 200
SAMPLE_REASON_CHARS = 100
CONVENTION_CHARS = 100
LABEL_KEY_CHARS = 64
LABEL_VALUE_CHARS = 100
# Text columns are unbounded, but a single value this long is an accident, not evidence.
TEXT_CHARS = 4_000_000

_SURROGATE = re.compile("[\ud800-\udfff]")


def _cut_marker(cut: int) -> str:
    return f"…[{cut} chars cut]"


class _Repairs:
    def __init__(self) -> None:
        self.notes: list[str] = []

    def text(self, value: str, where: str, limit: int = TEXT_CHARS) -> str:
        if "\x00" in value:
            self.notes.append(f"{where}: {value.count(chr(0))} NUL removed")
            value = value.replace("\x00", "")
        if not value.isascii() and _SURROGATE.search(value):
            self.notes.append(f"{where}: invalid surrogates replaced")
            value = _SURROGATE.sub("\ufffd", value)
        if len(value) > limit:
            marker = _cut_marker(len(value) - limit)
            keep = max(0, limit - len(marker))
            self.notes.append(f"{where}: cut from {len(value)} to {limit} chars")
            value = value[:keep] + marker[: limit - keep]
        return value

    def number(self, value: float | None, where: str) -> float | None:
        if value is None or math.isfinite(value):
            return value
        self.notes.append(f"{where}: {value!r} stored as null")
        return None

    def json(self, value: Any, where: str, depth: int = 0) -> Any:
        """A JSON value made storable; keys and strings are cleaned like text."""
        if isinstance(value, str):
            return self.text(value, where)
        if isinstance(value, bool) or value is None or isinstance(value, int):
            return value
        if isinstance(value, float):
            return self.number(value, where)
        if depth > 32:
            self.notes.append(f"{where}: nested deeper than 32 levels, dropped")
            return None
        if isinstance(value, Mapping):
            return {
                self.text(str(k), f"{where} key"): self.json(v, f"{where}.{_short(k)}", depth + 1)
                for k, v in value.items()
            }
        if isinstance(value, list | tuple):
            return [self.json(v, f"{where}[{i}]", depth + 1) for i, v in enumerate(value)]
        self.notes.append(f"{where}: a {type(value).__name__} stored as text")
        return self.text(str(value), where)

    def labels(self, labels: Mapping[str, str]) -> dict[str, str]:
        clean: dict[str, str] = {}
        for key, value in labels.items():
            name = self.text(str(key), "labels key", LABEL_KEY_CHARS)
            clean[name] = self.text(str(value), f"labels.{_short(name)}", LABEL_VALUE_CHARS)
        return clean


def _short(key: object) -> str:
    # Field names in a repair note are the app's keys, cut short; never values.
    text = str(key).replace("\x00", "")
    text = _SURROGATE.sub("\ufffd", text)
    return text if len(text) <= 40 else text[:40] + "…"


def _chunks(chunks: tuple[Chunk, ...], where: str, repairs: _Repairs) -> tuple[Chunk, ...]:
    out = []
    for chunk in chunks:
        at = f"{where}[{chunk.position}]"
        out.append(
            Chunk(
                position=chunk.position,
                text=repairs.text(chunk.text, f"{at}.text"),
                id=None if chunk.id is None else repairs.text(chunk.id, f"{at}.id"),
                score=repairs.number(chunk.score, f"{at}.score"),
                metadata=repairs.json(dict(chunk.metadata), f"{at}.metadata"),
            )
        )
    return tuple(out)


def storable(record: RagRecord) -> RagRecord:
    """The record with every value a database could refuse repaired and listed."""
    repairs = _Repairs()
    fixed = replace(
        record,
        question=repairs.text(record.question, "question"),
        answer=repairs.text(record.answer, "answer"),
        chunks=_chunks(record.chunks, "chunks", repairs),
        retrieved=_chunks(record.retrieved, "retrieved", repairs),
        labels=repairs.labels(record.labels),
        generation=repairs.json(dict(record.generation), "generation"),
        keep=None if record.keep is None else repairs.text(record.keep, "keep", KEEP_REASON_CHARS),
        sample_reason=repairs.text(record.sample_reason, "sample_reason", SAMPLE_REASON_CHARS),
        convention=repairs.text(record.convention, "convention", CONVENTION_CHARS),
        incomplete=None
        if record.incomplete is None
        else repairs.text(record.incomplete, "incomplete"),
    )
    if not repairs.notes:
        return record
    return replace(fixed, repairs=(*record.repairs, *repairs.notes))


def storable_labels(labels: Mapping[str, str]) -> dict[str, str]:
    """Labels as segments store them (sampling counts, dropped traces)."""
    return _Repairs().labels(labels)


def storable_feedback(item: Feedback) -> Feedback:
    """Feedback whose value a database can take (text cleaned, non-finite numbers null)."""
    repairs = _Repairs()
    value = repairs.json(item.value, "feedback")
    if value is None:  # a non-finite number: the feedback arrived, its value did not
        value = "invalid: not a finite number"
    return replace(item, value=value) if repairs.notes else item
