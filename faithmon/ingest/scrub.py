"""Replace PII with keyed, consistent pseudonyms before anything is stored.

Each detected value becomes ``<KIND_xxxxxxxx>``: HMAC-SHA256 under the scrub key
over the value's normalised form (see ``detectors``), so the same value gets
the same placeholder wherever it appears in a record (question, chunks, answer,
labels, metadata, settings; keys as well as values, since a key such as
``"jane.doe@example.com"`` is as private as a value) and different values get
different ones. A judge can then still tell "the answer repeats the chunk's
account number" from "it gives another one".

Scope decides whether placeholders also match *across* records, which makes
records linkable: ``record`` (the default) keys each record apart, ``tenant``
keys by the tenant label, ``global`` keys everything alike.
"""

from __future__ import annotations

import hashlib
import hmac
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any, Literal

from ..model import Chunk, RagRecord
from .detectors import Detector, Found, builtin

Scope = Literal["record", "tenant", "global"]
SCOPES: tuple[Scope, ...] = ("record", "tenant", "global")
CACHE_ENTRIES = 4096
CACHE_MAX_TEXT = 8192


class PiiScrubber:
    """Scrub every text of a record with the pattern detectors (plus any extra ones).

    Not thread-safe (its cache): the pipeline calls it under its own lock.
    """

    def __init__(
        self,
        key: bytes,
        phone_region: str = "US",
        scope: Scope = "record",
        extra_detectors: Sequence[Detector] = (),
    ) -> None:
        if len(key) < 16:
            raise ValueError("the scrub key must be at least 16 bytes")
        if scope not in SCOPES:
            raise ValueError(f"scope must be one of {', '.join(SCOPES)}")
        self._key = key
        self._scope = scope
        self._detectors = [*builtin(phone_region), *extra_detectors]
        # Labels and knowledge-base chunks repeat from record to record, and
        # detection (phone matching above all) is the costliest step of ingest.
        self._cache: OrderedDict[str, tuple[Found, ...]] = OrderedDict()

    def pseudonym(self, kind: str, value: str, scope_id: str = "") -> str:
        message = f"{scope_id}\x00{kind}\x00{value}".encode()
        digest = hmac.new(self._key, message, hashlib.sha256).hexdigest()
        return f"<{kind}_{digest[:8]}>"

    def detect(self, text: str) -> tuple[Found, ...]:
        """Non-overlapping findings, in order; the first detector wins a tie."""
        cached = self._cache.get(text)
        if cached is not None:
            self._cache.move_to_end(text)
            return cached
        candidates = [
            (found, rank) for rank, detect in enumerate(self._detectors) for found in detect(text)
        ]
        candidates.sort(key=lambda item: (item[0].start, item[1], -item[0].end))
        kept: list[Found] = []
        cursor = 0
        for found, _ in candidates:
            if found.start >= cursor and found.end > found.start:
                kept.append(found)
                cursor = found.end
        result = tuple(kept)
        if len(text) <= CACHE_MAX_TEXT:
            self._cache[text] = result
            if len(self._cache) > CACHE_ENTRIES:
                self._cache.popitem(last=False)
        return result

    def scrub_text(self, text: str, scope_id: str = "") -> str:
        """The text with every detected value replaced by its pseudonym."""
        if not text:
            return text
        findings = self.detect(text)
        if not findings:
            return text
        out: list[str] = []
        cursor = 0
        for found in findings:
            out.append(text[cursor : found.start])
            out.append(self.pseudonym(found.kind, found.value, scope_id))
            cursor = found.end
        out.append(text[cursor:])
        return "".join(out)

    def _mapping_key(self, key: Any, scope_id: str) -> Any:
        return self.scrub_text(key, scope_id) if isinstance(key, str) else key

    def _value(self, value: Any, scope_id: str) -> Any:
        if isinstance(value, str):
            return self.scrub_text(value, scope_id)
        if isinstance(value, Mapping):
            # Two keys collide only if they hold the same PII (say, in two letter
            # cases); the later value then wins, which loses data but leaks none.
            return {
                self._mapping_key(k, scope_id): self._value(v, scope_id) for k, v in value.items()
            }
        if isinstance(value, list | tuple):
            return [self._value(v, scope_id) for v in value]
        return value

    def scrub_labels(self, labels: Mapping[str, str], scope_id: str = "") -> dict[str, str]:
        """Labels with PII in their keys or values replaced, as records' labels are.

        ``scope_id`` is :meth:`scope_of` the record they belong to, so the result
        matches that record's scrubbed labels exactly. Left empty, pseudonyms are the
        ``global`` scope's: stable across records, as a count per segment needs.
        """
        return {
            self._mapping_key(k, scope_id): self.scrub_text(v, scope_id) for k, v in labels.items()
        }

    def _chunks(self, chunks: tuple[Chunk, ...], scope_id: str) -> tuple[Chunk, ...]:
        return tuple(
            replace(
                chunk,
                text=self.scrub_text(chunk.text, scope_id),
                id=self.scrub_text(chunk.id, scope_id) if chunk.id else chunk.id,
                metadata=self._value(dict(chunk.metadata), scope_id),
            )
            for chunk in chunks
        )

    def scope_of(self, record: RagRecord) -> str:
        if self._scope == "record":
            return record.trace_id
        if self._scope == "tenant":
            return "tenant:" + record.labels.get("tenant", "")
        return ""

    def __call__(self, record: RagRecord) -> RagRecord:
        scope_id = self.scope_of(record)
        return replace(
            record,
            question=self.scrub_text(record.question, scope_id),
            answer=self.scrub_text(record.answer, scope_id),
            chunks=self._chunks(record.chunks, scope_id),
            retrieved=self._chunks(record.retrieved, scope_id),
            labels=self.scrub_labels(record.labels, scope_id),
            generation=self._value(dict(record.generation), scope_id),
            keep=self.scrub_text(record.keep, scope_id) if record.keep else record.keep,
        )


def identity(record: RagRecord) -> RagRecord:
    return record


__all__ = ["SCOPES", "PiiScrubber", "Scope", "identity"]
